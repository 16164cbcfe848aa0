from __future__ import annotations

from agentv_ci.model.result import AssertionResult, GraderResult, TestResult
from agentv_ci.reporting.failure_lines import CONSOLE, CONSOLE_VERBOSE, failure_lines
from agentv_ci.security.redaction import register_secret


def _result(*graders: GraderResult, **extra: object) -> TestResult:
    return TestResult(
        test_id="t", suite="s", target="x", score=0.0, execution_status="quality_failure",
        verdict="fail", scores=list(graders), **extra,  # type: ignore[arg-type]
    )  # fmt: skip


def _grader(name: str, *checks: AssertionResult, **extra: object) -> GraderResult:
    return GraderResult(name=name, type="t", score=0.0, verdict="fail", assertions=list(checks), **extra)  # type: ignore[arg-type]


def test_each_value_is_escaped_on_one_line_and_cut() -> None:
    hostile = "line\n::set-output name=x::y\x1b]0;title\x07" + "z" * 1000
    check = AssertionResult("contains", False, expected=hostile, actual=hostile)
    lines = failure_lines(_result(_grader("evil\nFAIL s/t", check)))
    assert len(lines) == 1
    line = lines[0]
    assert line.startswith("    x evil\\nFAIL s/t: expected line\\n::set-output")
    assert "\x1b" not in line and "\x07" not in line and "\n" not in line
    assert "chars cut]" in line and len(line) < 2 * CONSOLE.value + 60


def test_many_failed_checks_are_counted_not_listed() -> None:
    checks = [AssertionResult(f"check {i}", False, expected="a", actual="b") for i in range(5000)]
    lines = failure_lines(_result(_grader("big", *checks)))
    assert len(lines) == CONSOLE.checks + 1
    assert lines[-1] == "    ... 5000 failed check(s) in all (the reports list them)"
    assert len(failure_lines(_result(_grader("big", *checks)), CONSOLE_VERBOSE)) == CONSOLE_VERBOSE.checks + 1


def test_a_judge_reason_a_grader_error_and_a_secret() -> None:
    judge = _grader("judge", details={"reasoning": "It says 14 days, not 30."})
    broken = _grader("script", error="exit 1: Traceback...")
    lines = failure_lines(_result(judge, broken))
    assert lines == [
        "    x judge (0.00): It says 14 days, not 30.",
        "    x script: error: exit 1: Traceback...",
    ]
    secret = "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
    register_secret(secret)  # a key the run knows (conftest clears the registry after each test)
    leaky = _grader("leak", AssertionResult("x", False, expected="ok", actual=f"key {secret}"))
    text = "\n".join(failure_lines(_result(leaky, output=f"my key is {secret}"), CONSOLE_VERBOSE))
    assert secret not in text and "answer: my key is" in text


def test_a_repeated_test_shows_its_first_failing_attempt() -> None:
    attempt = _result(_grader("g", AssertionResult("c", False, expected="1", actual="2")))
    assert failure_lines(_result(trials=[attempt])) == ["    x g: expected 1, got 2"]
