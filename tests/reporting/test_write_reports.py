from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from agentv_ci.errors import ConfigError
from agentv_ci.gating import GateOptions, decide
from agentv_ci.reporting import write_report, write_reports
from agentv_ci.results.results_file import read_results
from tests.reporting.sample_runs import baseline_summary, sample_summary


def test_write_reports_loads_every_reporter_through_entry_points(tmp_path: Path) -> None:
    summary = sample_summary(tmp_path)
    out = tmp_path / "out"
    write_reports(
        summary,
        junit=out / "junit.xml",
        sarif=out / "report.sarif",
        markdown=out / "summary.md",
        jsonl=out / "index.jsonl",
        repo_root=tmp_path,
        baseline=baseline_summary(tmp_path),
        selection={"evals/only.yaml": "asked for on the command line"},
    )
    assert ET.parse(out / "junit.xml").getroot().get("tests") == "6"
    assert json.loads((out / "report.sarif").read_text())["runs"][0]["results"]
    markdown = (out / "summary.md").read_text()
    assert "asked for on the command line" in markdown and "Changes vs baseline" in markdown
    written = read_results(out / "index.jsonl")
    assert [(r.test_id, r.score, r.verdict) for r in written] == [
        (r.test_id, r.score, r.verdict) for r in summary.results
    ]


def test_markdown_shows_the_given_decision(tmp_path: Path) -> None:
    summary = sample_summary(tmp_path)
    lenient = decide(summary, GateOptions(min_pass_rate=0.5, fail_on_error=False))
    write_reports(summary, markdown=tmp_path / "s.md", repo_root=tmp_path, decision=lenient)
    assert (tmp_path / "s.md").read_text().startswith("⚠️ **agentv-ci: INCONCLUSIVE")


def test_unknown_reporter_is_a_config_error_with_a_suggestion(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        write_report("sarf", sample_summary(tmp_path), tmp_path / "x.sarif", repo_root=tmp_path)
    assert caught.value.message == "no reporter named 'sarf' is installed"
    assert caught.value.hint is not None and caught.value.hint.startswith(
        "did you mean `sarif`? installed reporters:"
    )
