"""`ResultsWriter` writes each row with one unbuffered write call; a short write (a signal, a full
disk) is finished by more calls, as a buffered flush would, and a write that takes nothing fails."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from agentv_ci.model.result import TestResult
from agentv_ci.results.results_file import ResultsWriter, read_results
from tests.reporting.golden import FAKE_REPO
from tests.reporting.sample_runs import encodable, sample_results


class _ShortWrites(io.RawIOBase):
    """A file that takes at most `most` bytes a call."""

    def __init__(self, inner: io.RawIOBase, most: int) -> None:
        self.inner, self.most = inner, most

    def writable(self) -> bool:
        return True

    def write(self, data: object) -> int:
        chunk = bytes(data)[: self.most]  # type: ignore[call-overload]
        return self.inner.write(chunk) or 0 if chunk and self.most else 0

    def close(self) -> None:
        self.inner.close()
        super().close()


def test_a_row_written_in_short_pieces_is_whole(tmp_path: Path) -> None:
    rows = encodable(sample_results(FAKE_REPO))
    index = tmp_path / "index.jsonl"
    with ResultsWriter(index) as writer:
        writer._handle = _ShortWrites(writer._handle, 100)  # type: ignore[arg-type]
        for row in rows:
            writer.append(row)
    assert index.read_bytes() == _written_at_once(rows, tmp_path / "whole.jsonl").read_bytes()
    assert len(read_results(index)) == len(rows)


def test_a_write_that_takes_nothing_fails(tmp_path: Path) -> None:
    row = encodable(sample_results(FAKE_REPO))[0]
    with ResultsWriter(tmp_path / "index.jsonl") as writer:
        writer._handle = _ShortWrites(writer._handle, 0)  # type: ignore[arg-type]
        with pytest.raises(OSError, match="could not be written whole"):
            writer.append(row)


def _written_at_once(rows: list[TestResult], index: Path) -> Path:
    with ResultsWriter(index) as writer:
        for row in rows:
            writer.append(row)
    return index
