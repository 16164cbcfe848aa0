"""Tests a fork's PR had no key for (`needs_secret` rows): never green, said first, and a variable
name from a (possibly forged) artifact is repeated only when it is a plain variable name."""

from __future__ import annotations

from agentv_ci.errors import ExitCode
from agentv_ci.gating import GateOptions, decide
from agentv_ci.model.result import RunSummary, TestResult


def ok(test_id: str) -> TestResult:
    return TestResult(test_id, "s", "mock", 1.0, "ok", verdict="pass")


def bad(test_id: str) -> TestResult:
    return TestResult(test_id, "s", "mock", 0.2, "quality_failure", verdict="fail")


def unkeyed(test_id: str, variable: str = "OPENAI_API_KEY") -> TestResult:
    return TestResult(
        test_id,
        "s",
        "llm",
        0.0,
        "not_run",
        verdict="skip",
        error=f"not run: target 'llm' needs {variable}",
        failure_reason_code="needs_secret",
        missing_secret=variable,
    )


def test_tests_needing_a_secret_make_the_run_inconclusive_with_that_reason_first() -> None:
    summary = RunSummary([ok("a"), unkeyed("b"), unkeyed("c")], planned=3, not_run=2)

    decision = decide(summary, GateOptions())

    assert decision.exit_code == ExitCode.INCONCLUSIVE and not decision.passed
    assert decision.reasons[0].startswith(
        "2 tests need a secret a fork's pull request does not get (OPENAI_API_KEY): not run; "
        "a maintainer can run them after review"
    )
    assert not any("incomplete" in r or "did not run" in r for r in decision.reasons)


def test_a_failing_test_that_ran_still_fails_the_gate() -> None:
    decision = decide(RunSummary([bad("a"), unkeyed("b")], planned=2, not_run=1), GateOptions())

    assert decision.exit_code == ExitCode.GATE_FAILED
    assert any(r.startswith("1 test needs a secret") and "run it after review" in r for r in decision.reasons)


def test_other_tests_not_run_are_still_counted_as_incomplete() -> None:
    plain = TestResult("c", "s", "mock", 0.0, "not_run", verdict="skip", failure_reason_code="interrupted")
    decision = decide(RunSummary([ok("a"), unkeyed("b"), plain], planned=3, not_run=2), GateOptions())

    assert decision.exit_code == ExitCode.INCONCLUSIVE
    assert "incomplete: 1 of 3 tests did not run" in decision.reasons


def test_only_plain_variable_names_are_repeated_and_at_most_three() -> None:
    rows = [
        ok("a"),
        unkeyed("b", "X\n::error::forged"),
        unkeyed("c", "$(curl evil)"),
        *(unkeyed(f"k{i}", f"KEY_{i}") for i in range(5)),
    ]
    decision = decide(RunSummary(rows, planned=len(rows), not_run=len(rows) - 1), GateOptions())

    assert decision.reasons[0].startswith(
        "7 tests need a secret a fork's pull request does not get (KEY_0, KEY_1, KEY_2): not run"
    )
    assert "forged" not in decision.verdict and "curl" not in decision.verdict
