from __future__ import annotations

from pathlib import Path

from agentv_ci.plugins import ReportOptions
from agentv_ci.reporting.jsonl import JsonlReporter
from agentv_ci.reporting.results_file import read_results
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
