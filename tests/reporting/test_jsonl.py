from __future__ import annotations

import json
from pathlib import Path

from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.plugins import ReportOptions
from agentv_ci.reporting.jsonl import JsonlReporter
from agentv_ci.results.results_file import read_results
from tests.reporting.golden import assert_golden
from tests.reporting.sample_runs import sample_summary

RELATIVE_REPO = Path("repo")  # eval paths stay relative, so the golden file is machine independent


def test_jsonl_matches_golden_and_reads_back(tmp_path: Path) -> None:
    summary = sample_summary(RELATIVE_REPO)
    out = tmp_path / "index.jsonl"
    out.write_text("stale row\n")
    JsonlReporter().write(summary, ReportOptions(path=out, repo_root=tmp_path))
    assert_golden("index.jsonl", out.read_text(encoding="utf-8"))
    back = read_results(out)
    assert [(r.test_id, r.execution_status, r.verdict) for r in back] == [
        (r.test_id, r.execution_status, r.verdict) for r in summary.results
    ]
    assert "\ud83d" not in (back[1].output or "")  # the lone surrogate was replaced, the row kept


def test_every_row_carries_its_verdict_even_the_default_one(tmp_path: Path) -> None:
    # `verdict` defaults to "fail"; a default must not be left out of the row (AgentV's rows carry it).
    rows = [
        TestResult("q", "s", "m", 0.2, "quality_failure"),
        TestResult("e", "s", "m", 0.0, "execution_error", error="boom"),
        TestResult("p", "s", "m", 1.0, "ok", verdict="pass"),
    ]
    out = tmp_path / "index.jsonl"
    JsonlReporter().write(RunSummary(rows), ReportOptions(path=out, repo_root=tmp_path))
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["verdict"] for row in written] == ["fail", "fail", "pass"]
