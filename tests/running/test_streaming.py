"""A run over a JSONL dataset reads it once: every line is read, built and checked before anything
runs, and the run takes the built tests back from its spool (running/spooled_tests.py), not from the
dataset; nothing of the dataset or of the results is held, and the figures are those of the rows."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentv_ci.loading import jsonl
from agentv_ci.model.result import TestResult
from agentv_ci.results.results_file import ResultsWriter, read_results
from agentv_ci.results.stored_results import StoredResults
from agentv_ci.results.totals import totals_of
from agentv_ci.running.session import RunRequest, execute_run

TESTS = 400
WORKERS = 4


def _dataset(root: Path, count: int = TESTS) -> Path:
    (root / ".git").mkdir()
    (root / ".agentv").mkdir()
    (root / ".agentv" / "targets.yaml").write_text("targets:\n  - name: default\n    provider: mock\n")
    (root / "cases.yaml").write_text("name: cases\nassertions:\n  - type: contains\n    value: answer\n")
    lines = (json.dumps({"id": f"t{i:04d}", "input": f"question {i}"}) for i in range(count))
    (root / "cases.jsonl").write_text("".join(line + "\n" for line in lines))
    return root / "cases.jsonl"


def test_the_dataset_is_read_once_and_every_line_before_the_first_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset = _dataset(tmp_path)
    events: list[str] = []  # "read" for each line the dataset reader hands out, "row" for each result written
    read_lines = jsonl._cases

    def reading(handle: Iterator[bytes], file: str, ctx: object) -> Iterator[object]:
        for case in read_lines(handle, file, ctx):  # type: ignore[arg-type]
            events.append("read")
            yield case

    append = ResultsWriter.append

    def writing(self: ResultsWriter, result: TestResult) -> TestResult:
        events.append("row")
        return append(self, result)

    monkeypatch.setattr(jsonl, "_cases", reading)
    monkeypatch.setattr(ResultsWriter, "append", writing)
    monkeypatch.chdir(tmp_path)
    outcome = execute_run(
        RunRequest(paths=[dataset], output_dir=tmp_path / "out", dry_run=True, workers=WORKERS, quiet=True)
    )
    # One reading checks every line before anything runs; the run reads none again.
    assert events == ["read"] * TESTS + ["row"] * TESTS
    # nothing was held: the summary's results are the rows on disk, with the run's own figures
    results = outcome.summary.results
    assert isinstance(results, StoredResults) and len(results) == TESTS
    rows = read_results(tmp_path / "out" / "index.jsonl")
    assert list(results) == rows
    assert results.tally().overall() == totals_of(rows)
    assert sorted(r.test_id for r in rows) == [f"t{i:04d}" for i in range(TESTS)]


def test_a_dataset_edited_after_the_check_changes_nothing_the_run_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset = _dataset(tmp_path, 30)
    read_lines = jsonl._cases

    def edited_after_reading(handle: Iterator[bytes], file: str, ctx: object) -> Iterator[object]:
        yield from read_lines(handle, file, ctx)  # type: ignore[arg-type]
        # the dataset is edited once checked and planned: t0007 would no longer build
        dataset.write_text(dataset.read_text().replace('"id": "t0007"', '"id": 7'))

    monkeypatch.setattr(jsonl, "_cases", edited_after_reading)
    monkeypatch.chdir(tmp_path)
    outcome = execute_run(RunRequest(paths=[dataset], output_dir=tmp_path / "out", dry_run=True, quiet=True))
    # the run runs the tests as they were checked and planned, every one of them
    assert '"id": 7' in dataset.read_text()
    rows = {r.test_id: r for r in outcome.summary.results}
    assert sorted(rows) == [f"t{i:04d}" for i in range(30)]
    assert rows["t0007"].execution_status == rows["t0006"].execution_status != "not_run"
    assert (outcome.summary.planned, outcome.summary.not_run) == (30, 0)
    assert not any("changed during the run" in w for w in outcome.warnings)
