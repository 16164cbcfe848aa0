"""Where each finished row of a run goes: `index.jsonl` (through the writer open while the run runs),
the tally the gates and summaries read, the duplicate-key check and the progress line. The runner
is handed `append` when it is built; the file is opened around the part of the run that writes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agentv_ci.model.result import TestResult
from agentv_ci.results.results_file import ResultsWriter
from agentv_ci.results.tally import ResultsTally
from agentv_ci.results.written_rows import WrittenRows
from agentv_ci.running.progress import Progress
from agentv_ci.running.resume import KeyCheck


class RowSink:
    """Counts every row (`count`: a resumed run's earlier rows) and writes the new ones (`append`)."""

    def __init__(self, progress: Progress | None = None) -> None:
        self.tally = ResultsTally()
        self.keys = KeyCheck()
        self.progress = progress
        self.written = WrittenRows()  # what the writer saw, for the reports (all `writing` blocks)
        self._writer: ResultsWriter | None = None

    def count(self, result: TestResult) -> None:
        self.tally.add(result)
        self.keys.add(result)

    @contextmanager
    def writing(self, index: Path, *, shown: bool = True) -> Iterator[None]:
        """Rows appended inside go to `index` (and, when `shown`, to the progress line)."""
        with ResultsWriter(index, self.written) as writer:
            self._writer = writer
            progress, self.progress = self.progress, (self.progress if shown else None)
            try:
                yield
            finally:
                self._writer, self.progress = None, progress

    def append(self, result: TestResult) -> None:
        writer = self._writer
        if writer is None:  # a row outside `writing` would be lost: a bug, never silently dropped
            raise RuntimeError("a row was finished while no results file was open")
        result = writer.append(result)  # the row as written: secrets redacted
        self.tally.add(result)
        self.keys.add(result)
        if self.progress is not None:
            self.progress.update(result)
