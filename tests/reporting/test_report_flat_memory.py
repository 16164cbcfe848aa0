"""`report` reads a run in flat memory (issue 19, item 9): its rows are spooled and read back as the
reports need them, with the same verdicts, totals and reports as reading them whole. The memory
figures themselves are measured by bench/hostile_sizes.py (not a timed test)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentv_ci.gating import rejudge, rejudge_result
from agentv_ci.model.result import AssertionResult, GraderResult, TestResult
from agentv_ci.results.results_file import load_run
from agentv_ci.results.results_writer import ResultsWriter
from agentv_ci.results.stored_results import StoredResults
from agentv_ci.results.streamed_run import load_run_streamed
from agentv_ci.results.tally import tally_of
from tests.cli_helpers import run_cli


def _row(i: int, *, score: float, attempt: int | None = None) -> TestResult:
    passed = score >= 0.8
    return TestResult(
        test_id=f"t{i}",
        suite=f"s{i % 3}",
        target="default",
        score=score,
        execution_status="ok" if passed else "quality_failure",
        verdict="pass" if passed else "fail",
        scores=[GraderResult("g", "contains", score, "pass" if passed else "fail",
                             assertions=[AssertionResult("has it", passed)])],
        eval_path=f"evals/s{i % 3}.eval.yaml",
        attempt=attempt,
    )  # fmt: skip


def _write(directory: Path, rows: list[TestResult]) -> Path:
    with ResultsWriter(directory / "index.jsonl") as writer:
        for row in rows:
            writer.append(row)
    return directory


@pytest.mark.parametrize("threshold", [None, 0.5])
def test_the_streamed_run_equals_the_run_read_whole(tmp_path: Path, threshold: float | None) -> None:
    run = _write(tmp_path / "run", [_row(i, score=(i % 10) / 10) for i in range(200)])
    spool = tmp_path / "spool"
    spool.mkdir()
    judge = (lambda r: rejudge_result(r, threshold)) if threshold is not None else None
    streamed = load_run_streamed(run, spool, judge)
    whole = load_run(run)
    if threshold is not None:
        whole = rejudge(whole, threshold)
    assert isinstance(streamed.results, StoredResults)  # not held in memory
    assert list(streamed.results) == list(whole.results)
    assert tally_of(streamed.results).overall() == tally_of(whole.results).overall()
    assert (streamed.plan_unknown, streamed.dry_run) == (whole.plan_unknown, whole.dry_run)


def test_rows_repeating_a_test_are_merged_as_before(tmp_path: Path) -> None:
    rows = [_row(1, score=1.0, attempt=0), _row(1, score=0.0, attempt=1), _row(2, score=1.0)]
    run = _write(tmp_path / "run", rows)
    spool = tmp_path / "spool"
    spool.mkdir()
    streamed = load_run_streamed(run, spool)
    assert not isinstance(streamed.results, StoredResults)  # attempts side by side: the usual reader
    assert list(streamed.results) == list(load_run(run).results)


def test_report_through_the_cli_matches_and_leaves_no_spool_behind(tmp_path: Path) -> None:
    run = _write(tmp_path / "run", [_row(i, score=(i % 10) / 10) for i in range(50)])
    junit = tmp_path / "junit.xml"
    spools = tmp_path / "tmp"
    spools.mkdir()
    env = {**os.environ, "TMPDIR": str(spools)}
    done = run_cli("report", str(run), "--junit", str(junit), env=env, timeout=60)
    assert done.returncode == 1, done.stdout + done.stderr  # 40 of 50 below 0.8
    assert "10/50 tests passed" in done.stdout
    assert junit.read_text().count("<failure ") == 40
    done = run_cli("report", str(run), "--threshold", "0.5", env=env, timeout=60)
    assert "25/50 tests passed" in done.stdout
    assert list(spools.iterdir()) == []  # the spool is removed
