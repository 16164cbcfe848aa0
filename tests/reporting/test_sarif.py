from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from agentv_ci.model.diagnostics import Diagnostic
from agentv_ci.model.result import AssertionResult, GraderResult, RunSummary, TestResult
from agentv_ci.plugins import ReportOptions
from agentv_ci.reporting.sarif import MAX_RESULTS, SarifReporter, render_sarif, sarif_from_diagnostics
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


def _github_profile(document: dict) -> None:
    """GitHub code scanning's requirements beyond the schema (ci-peers.md 4.3)."""
    (run,) = document["runs"]
    rules = run["tool"]["driver"]["rules"]
    ids = [rule["id"] for rule in rules]
    assert len(set(ids)) == len(ids) and len(rules) <= 25_000
    for rule in rules:
        for key in ("shortDescription", "fullDescription", "help"):
            assert 0 < len(rule[key]["text"]) <= 1024
        assert len(rule["properties"]["tags"]) <= 20
    assert len(run["results"]) <= MAX_RESULTS
    for result in run["results"]:
        assert result["ruleId"] in ids and ids[result["ruleIndex"]] == result["ruleId"]
        assert result["level"] in ("none", "note", "warning", "error")
        assert result["message"]["text"].strip()
        assert result["partialFingerprints"]
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        uri = physical["artifactLocation"]["uri"]
        assert uri and " " not in uri and not uri.startswith("/")
        if "://" not in uri:
            assert physical["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert physical["region"]["startLine"] >= 1
    assert "automationDetails" not in run  # upload-sarif's `category` (or its per-job default) sets it


def test_locations_are_repo_relative_uris_with_a_base_id() -> None:
    rows = [
        TestResult("spaced", "s", "m", 0.0, "quality_failure", eval_path="/repo/evals/my evals/a#1.yaml",
                   line=0, scores=[GraderResult("g", "contains", 0.0, "fail")]),
        TestResult("outside", "s", "m", 0.0, "execution_error", error="x", eval_path="/elsewhere/b.yaml"),
    ]  # fmt: skip
    document = render_sarif(RunSummary(rows), FAKE_REPO)
    assert _schema_errors(document) == []
    _github_profile(document)
    locations = {
        r["message"]["text"].split(":")[0]: r["locations"][0]["physicalLocation"]
        for r in document["runs"][0]["results"]
    }
    assert locations["s/spaced [m]"]["artifactLocation"] == {
        "uri": "evals/my%20evals/a%231.yaml",
        "uriBaseId": "%SRCROOT%",
    }
    assert locations["s/spaced [m]"]["region"]["startLine"] == 1  # line 0 clamped
    assert locations["s/outside [m]"]["artifactLocation"] == {"uri": "file:///elsewhere/b.yaml"}


def test_category_becomes_automation_details_only_when_asked(tmp_path: Path) -> None:
    out = tmp_path / "r.sarif"
    options = ReportOptions(path=out, repo_root=tmp_path, sarif_category="evals/nightly")
    SarifReporter().write(sample_summary(tmp_path), options)
    run = json.loads(out.read_text(encoding="utf-8"))["runs"][0]
    assert run["automationDetails"] == {"id": "evals/nightly/"}


def test_huge_hostile_run_stays_inside_github_upload_limits() -> None:
    import gzip
    import random
    import string

    rnd = random.Random(7)
    noise = "".join(rnd.choice(string.printable) for _ in range(200_000))  # barely compressible

    def grader(i: int) -> GraderResult:
        evidence = noise[i % 1000 : i % 1000 + 5000]
        failed = AssertionResult("ok", False, evidence)
        return GraderResult("judge", "llm-grader", 0.0, "fail", assertions=[failed])

    rows = [
        TestResult(f"t{i}", f"suite{i % 7}", "m", 0.0, "quality_failure", eval_path="evals/big.eval.yaml",
                   line=i + 1, scores=[grader(i)])
        for i in range(MAX_RESULTS + 3_000)
    ]  # fmt: skip
    out_doc = render_sarif(RunSummary(rows), FAKE_REPO)
    _github_profile(out_doc)
    assert len(out_doc["runs"][0]["results"]) == MAX_RESULTS
    raw = (json.dumps(out_doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    assert len(gzip.compress(raw)) < 10_000_000  # GitHub rejects bigger gzipped uploads


def test_per_attempt_rows_give_one_result_per_test() -> None:
    rows = [
        TestResult("t", "s", "m", 0.0, "quality_failure", attempt=i, eval_path="e.yaml", line=3,
                   scores=[GraderResult("g", "contains", 0.0, "fail")])
        for i in range(3)
    ]  # fmt: skip
    results = render_sarif(RunSummary(rows), FAKE_REPO)["runs"][0]["results"]
    assert len(results) == 1


def test_driver_carries_a_version_even_when_the_run_recorded_none() -> None:
    from agentv_ci import __version__

    summary = sample_summary(FAKE_REPO)
    driver = render_sarif(msgspec.structs.replace(summary, version=""), FAKE_REPO)["runs"][0]["tool"][
        "driver"
    ]
    assert driver["version"] == __version__ and "semanticVersion" not in driver
    recorded = render_sarif(msgspec.structs.replace(summary, version="9.8.7"), FAKE_REPO)["runs"][0]["tool"][
        "driver"
    ]
    assert (recorded["version"], recorded["semanticVersion"]) == ("9.8.7", "9.8.7")
    diagnostics = sarif_from_diagnostics([], FAKE_REPO)["runs"][0]["tool"]["driver"]
    assert diagnostics["version"] == __version__
