"""GitLab Code Quality report: GitLab's documented fields, one finding per failing test at its eval
line, fingerprints that identify the test and kind of failure and nothing that varies."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
from jsonschema import Draft202012Validator

from agentv_ci.gating import GateDecision, WaivedTest
from agentv_ci.model.result import GraderResult, RunSummary, TestResult
from agentv_ci.model.waivers import Waiver
from agentv_ci.reporting import write_report
from agentv_ci.reporting.codequality import render_codequality
from tests.reporting.golden import FAKE_REPO, assert_golden
from tests.reporting.sample_runs import HOSTILE, sample_summary

SCHEMA = Path(__file__).resolve().parent.parent / "schemas" / "gitlab-codequality.schema.json"


def schema_errors(document: object) -> list[str]:
    validator = Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))
    return [f"{e.json_path}: {e.message}" for e in validator.iter_errors(document)]


def _write(summary: RunSummary, path: Path, **extras: object) -> list[dict]:
    write_report("gitlab-codequality", summary, path, repo_root=FAKE_REPO, **extras)
    return json.loads(path.read_text(encoding="utf-8"))


def test_codequality_matches_golden(tmp_path: Path) -> None:
    _write(sample_summary(FAKE_REPO), tmp_path / "cq.json")
    assert_golden("gl-code-quality-report.json", (tmp_path / "cq.json").read_text(encoding="utf-8"))


def test_the_report_has_gitlabs_documented_fields(tmp_path: Path) -> None:
    findings = _write(sample_summary(FAKE_REPO), tmp_path / "cq.json")
    assert schema_errors(findings) == []
    by_test = {f["description"].split(" ", 1)[0]: f for f in findings}
    assert sorted(by_test) == ["math/flaky-math", "math/timeout", "smoke/refund-policy"]  # failed + errored
    refund = by_test["smoke/refund-policy"]
    assert refund["location"] == {"path": "evals/smoke.eval.yaml", "lines": {"begin": 15}}
    assert refund["severity"] == "critical"  # a required grader failed
    assert refund["check_name"] == "agentv/contains"
    assert by_test["math/flaky-math"]["severity"] == "major"
    assert "3/5 attempts passed" in by_test["math/flaky-math"]["description"]
    assert by_test["math/timeout"]["check_name"] == "agentv/execution-error"
    assert by_test["math/timeout"]["severity"] == "critical"  # inconclusive
    assert len({f["fingerprint"] for f in findings}) == len(findings)  # GitLab keys findings by it


def test_an_empty_run_is_an_empty_array(tmp_path: Path) -> None:
    assert _write(RunSummary(results=[]), tmp_path / "cq.json") == []


def test_the_schema_catches_a_broken_report() -> None:
    findings = render_codequality(sample_summary(FAKE_REPO), FAKE_REPO)
    findings[0]["severity"] = "error"
    del findings[1]["location"]["lines"]
    findings[2]["location"]["path"] = "./evals/math.eval.yaml"
    errors = schema_errors(findings)
    assert len(errors) == 3, errors


def _rerun(result: TestResult) -> TestResult:
    """The same failure on another run: other scores, answer, line, time and cost."""
    return msgspec.structs.replace(
        result,
        score=result.score / 2,
        output="another answer",
        line=(result.line or 1) + 40,
        timestamp="2027-01-01T00:00:00Z",
        cost_usd=9.0,
        duration_ms=1.0,
        scores=[msgspec.structs.replace(g, score=g.score / 3) for g in result.scores],
    )


def test_fingerprints_are_stable_across_runs_and_distinct_across_tests() -> None:
    first = sample_summary(FAKE_REPO)
    second = RunSummary(results=[_rerun(r) for r in first.results], started_at="2027-01-01T00:00:00Z")
    before = {
        f["description"].split(" ", 1)[0]: f["fingerprint"] for f in render_codequality(first, FAKE_REPO)
    }
    after = {
        f["description"].split(" ", 1)[0]: f["fingerprint"] for f in render_codequality(second, FAKE_REPO)
    }
    assert before == after
    assert len(set(before.values())) == 3


def test_another_kind_of_failure_or_another_target_is_another_finding() -> None:
    failed = TestResult("t", "s", "mock", 0.1, "quality_failure", verdict="fail", line=3)
    errored = msgspec.structs.replace(failed, execution_status="execution_error", error="boom")
    other_target = msgspec.structs.replace(failed, target="gpt")
    prints = [
        render_codequality(RunSummary(results=[r]), FAKE_REPO)[0]["fingerprint"]
        for r in (failed, errored, other_target)
    ]
    assert len(set(prints)) == 3
    # ids that would collide if the parts were joined with a separator
    a = TestResult("a\0b", "s", "mock", 0.1, "quality_failure", verdict="fail")
    b = TestResult("a", "s\0b", "mock", 0.1, "quality_failure", verdict="fail")
    fa, fb = (render_codequality(RunSummary(results=[r]), FAKE_REPO)[0]["fingerprint"] for r in (a, b))
    assert fa != fb


def test_hostile_ids_and_answers_stay_one_clean_capped_line(tmp_path: Path) -> None:
    hostile_id = "id\x1b[31m\n::error::x\r\ud83d section_start:1:evil " + "y" * 3000
    result = TestResult(
        hostile_id,
        "suite\u202e",
        "mock",
        0.0,
        "quality_failure",
        verdict="fail",
        scores=[GraderResult("judge", "llm-grader\x1b[1m", 0.0, "fail", details={"reasoning": HOSTILE * 50})],
        eval_path=str(FAKE_REPO / "evals" / "a b\n.eval.yaml"),
        line=0,
    )
    findings = _write(RunSummary(results=[result]), tmp_path / "cq.json")
    assert schema_errors(findings) == []
    (finding,) = findings
    assert len(finding["description"]) <= 500
    assert "\x1b" not in json.dumps(finding, ensure_ascii=False)
    assert finding["description"].startswith("suite\\u202e/id ::error::x ? section_start:1:evil y")
    assert finding["location"] == {"path": "evals/a b\n.eval.yaml", "lines": {"begin": 1}}
    assert finding["check_name"] == "agentv/llm-grader"


def _decision(waiver: Waiver) -> GateDecision:
    return GateDecision(True, 0, waived=[WaivedTest("smoke", "refund-policy", "mock", waiver)])


def _refund_finding(tmp_path: Path, waiver: Waiver) -> dict:
    findings = _write(sample_summary(FAKE_REPO), tmp_path / "cq.json", decision=_decision(waiver))
    return next(f for f in findings if f["description"].startswith("smoke/refund-policy"))


def test_a_waived_failure_is_info_and_says_why(tmp_path: Path) -> None:
    refund = _refund_finding(tmp_path, Waiver("quarantined", "quarantined by @ana until 2026-02-01"))
    assert refund["severity"] == "info"
    assert refund["description"].endswith("[does not block: quarantined by @ana until 2026-02-01]")


def test_an_expired_quarantine_still_blocks(tmp_path: Path) -> None:
    assert _refund_finding(tmp_path, Waiver("expired", "quarantine expired"))["severity"] == "critical"
