"""The line naming the baseline: what it says for each kind, that it is safe in a PR comment, and that
its record in summary.json keeps the rest of the file and is read back by `load_run`."""

from __future__ import annotations

import json
from pathlib import Path

from agentv_ci.model.baseline import BaselineSource
from agentv_ci.model.result import TestResult
from agentv_ci.reporting.baseline_report import baseline_log_line, baseline_markdown_line, record_baseline
from agentv_ci.results.results_file import ResultsWriter, load_run, summary_from_results, write_summary_json

SHA = "0123456789abcdef0123456789abcdef01234567"


def test_each_kind_is_named_in_markdown_and_in_the_log() -> None:
    artifact = BaselineSource(
        "artifact", name="agentv-ci-results", artifact_id=12, run_id=345,
        run_url="https://github.com/o/r/actions/runs/345", commit=SHA,
    )  # fmt: skip
    assert baseline_markdown_line(artifact, compared=True) == (
        "**Baseline:** artifact `agentv-ci-results` (id 12) of workflow run "
        f"[345](https://github.com/o/r/actions/runs/345), commit `{SHA}`."
    )
    assert baseline_log_line(artifact) == (
        "baseline: artifact 'agentv-ci-results' (id 12) of workflow run 345 "
        f"(https://github.com/o/r/actions/runs/345), commit {SHA}"
    )
    rerun = BaselineSource("commit", commit=SHA, ref="merge-base")
    assert (
        baseline_markdown_line(rerun, compared=True)
        == f"**Baseline:** re-run at commit `{SHA}` (`merge-base`)."
    )
    assert baseline_log_line(rerun) == f"baseline: re-run at commit {SHA} (merge-base)"
    path = BaselineSource("path", name=".agentv-ci/base")
    assert baseline_markdown_line(path, compared=False) == (
        "**Baseline (when the run was gated):** results at `.agentv-ci/base`; "
        "not read again here, so no deltas."
    )
    missing = BaselineSource("none", reason="baseline: auto needs `github_token`")
    assert baseline_markdown_line(missing, compared=False) == (
        "**No baseline:** baseline: auto needs \\`github\\_token\\`."
    )


def test_hostile_names_are_escaped_and_odd_urls_are_not_linked() -> None:
    source = BaselineSource(
        "artifact",
        name="x` <script>@octocat",
        run_id=7,
        run_url="https://h/x)[y](javascript:z",
        commit="not a sha",
    )
    line = baseline_markdown_line(source, compared=True)
    assert "<script>" not in line and "@octocat" not in line
    assert "](" not in line  # no link built from a URL that would break out of it
    assert "of workflow run 7" in line
    reason = BaselineSource("none", reason="a\n::error::forged <b>" + "x" * 1000)
    text = baseline_markdown_line(reason, compared=True)
    assert "\n" not in text and "<b>" not in text and len(text) < 500


def test_the_record_in_summary_json_keeps_the_rest_and_is_read_back(tmp_path: Path) -> None:
    rows = [TestResult("t", "s", "m", 1.0, "ok", verdict="pass")]
    with ResultsWriter(tmp_path / "index.jsonl") as writer:
        writer.append(rows[0])
    write_summary_json(
        tmp_path / "summary.json", summary_from_results(rows, started_at="2026-01-01T00:00:00Z")
    )
    source = BaselineSource("commit", commit=SHA, ref="main")

    record_baseline(tmp_path, source)

    data = json.loads((tmp_path / "summary.json").read_text())
    assert data["baseline"] == {"kind": "commit", "commit": SHA, "ref": "main"}
    assert data["started_at"] == "2026-01-01T00:00:00Z" and data["totals"]["passed"] == 1
    assert load_run(tmp_path).baseline == source
    record_baseline(tmp_path / "nowhere", source)  # no summary.json: nothing to do, no error
    assert not (tmp_path / "nowhere").exists()
