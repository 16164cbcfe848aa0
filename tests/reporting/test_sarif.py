from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentv_ci.model.result import GraderResult, RunSummary, TestResult
from agentv_ci.plugins import ReportOptions
from agentv_ci.reporting.sarif import MAX_RESULTS, SarifReporter, render_sarif, sarif_from_diagnostics
from agentv_ci.validation.diagnostics import Diagnostic
from tests.reporting.golden import FAKE_REPO, assert_golden
from tests.reporting.sample_runs import sample_summary

SCHEMA = Path(__file__).resolve().parent.parent / "schemas" / "sarif-schema-2.1.0.json"


def _schema_errors(document: dict) -> list[str]:
    if not SCHEMA.is_file():
        pytest.skip(f"SARIF schema not vendored at {SCHEMA}")
    from jsonschema import Draft4Validator

    validator = Draft4Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))
    return [f"{e.json_path}: {e.message}" for e in validator.iter_errors(document)]


def test_sarif_matches_golden() -> None:
    text = json.dumps(render_sarif(sample_summary(FAKE_REPO), FAKE_REPO), indent=2, ensure_ascii=False) + "\n"
    assert_golden("report.sarif", text)


def test_sarif_validates_against_oasis_schema() -> None:
    assert _schema_errors(render_sarif(sample_summary(FAKE_REPO), FAKE_REPO)) == []


def test_schema_check_catches_a_broken_document() -> None:
    document = render_sarif(sample_summary(FAKE_REPO), FAKE_REPO)
    document["runs"][0]["results"][0]["level"] = "fatal"
    assert any("fatal" in e for e in _schema_errors(document))


def test_one_result_per_failing_grader_at_the_test_line() -> None:
    run = render_sarif(sample_summary(FAKE_REPO), FAKE_REPO)["runs"][0]
    rule_ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert rule_ids == ["agentv/contains", "agentv/equals", "agentv/execution-error", "agentv/llm-grader"]
    by_rule = {r["ruleId"]: r for r in run["results"]}
    assert len(run["results"]) == 4  # 2 graders of refund-policy, 1 of flaky-math, 1 execution error
    required = by_rule["agentv/contains"]
    assert required["level"] == "error"  # required grader
    assert by_rule["agentv/llm-grader"]["level"] == "warning"
    location = required["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "evals/smoke.eval.yaml"
    assert location["region"]["startLine"] == 15
    assert by_rule["agentv/execution-error"]["level"] == "error"
    for result in run["results"]:
        assert rule_ids[result["ruleIndex"]] == result["ruleId"]
        assert "\x1b" not in result["message"]["text"]


def test_fingerprints_are_stable_across_runs() -> None:
    first = render_sarif(sample_summary(FAKE_REPO), FAKE_REPO)["runs"][0]["results"]
    second = render_sarif(sample_summary(FAKE_REPO), FAKE_REPO)["runs"][0]["results"]
    assert [r["partialFingerprints"] for r in first] == [r["partialFingerprints"] for r in second]
    assert len({json.dumps(r["partialFingerprints"]) for r in first}) == len(first)


def test_failing_test_without_failing_grader_gets_threshold_rule() -> None:
    row = TestResult(
        "weighted", "s", "t", 0.7, "quality_failure", eval_path="e.yaml", line=2,
        scores=[GraderResult("a", "contains", 1.0, "pass"), GraderResult("b", "regex", 0.79, "pass")],
    )  # fmt: skip
    run = render_sarif(RunSummary([row]), FAKE_REPO)["runs"][0]
    assert [r["ruleId"] for r in run["results"]] == ["agentv/below-threshold"]


def test_results_capped_at_github_limit_with_note() -> None:
    rows = [
        TestResult(f"t{i}", "big", "m", 0.0, "quality_failure", eval_path="big.yaml", line=i + 1,
                   scores=[GraderResult("g", "contains", 0.0, "fail", required=(i == MAX_RESULTS + 5))])
        for i in range(MAX_RESULTS + 10)
    ]  # fmt: skip
    run = render_sarif(RunSummary(rows), FAKE_REPO)["runs"][0]
    assert len(run["results"]) == MAX_RESULTS
    assert run["results"][0]["level"] == "error"  # the most severe are kept
    note = run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"]
    assert note.startswith("10 of 25010 results were left out")


def test_validation_diagnostics_use_the_same_shape() -> None:
    diagnostics = [
        Diagnostic(
            "error", "E101", "unknown grader type 'containz'", "/repo/evals/a.yaml", 4, 9,
            hint="did you mean 'contains'?",
        ),
        Diagnostic("warning", "W201", "unknown key 'tgt'", "evals/b.yaml", 2, 1),
    ]  # fmt: skip
    document = sarif_from_diagnostics(diagnostics, FAKE_REPO, version="0.1.0")
    assert _schema_errors(document) == []
    results = document["runs"][0]["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [
        ("agentv/E101", "error"),
        ("agentv/W201", "warning"),
    ]
    region = results[0]["locations"][0]["physicalLocation"]
    assert region["artifactLocation"]["uri"] == "evals/a.yaml"
    assert region["region"] == {"startLine": 4, "startColumn": 9}


def test_reporter_plugin_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "r.sarif"
    SarifReporter().write(sample_summary(tmp_path), ReportOptions(path=out, repo_root=tmp_path))
    assert json.loads(out.read_text(encoding="utf-8"))["version"] == "2.1.0"
