"""What the console prints under a failed or errored test as it finishes: its failed checks with
what each expected and what came back, a judge's reason, a grader's error, and with -v the answer.

Everything here is data (answers, expected values, grader names): each value is redacted and cut
(`security.redaction.excerpt`) and printed escaped on its own line (`printable`), so an answer can neither
add a log line nor send a terminal sequence, and one test prints a bounded number of characters.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentv_ci.model.result import GraderResult, TestResult
from agentv_ci.reporting.details import failed_checks, failing_graders, judge_reason
from agentv_ci.security.redaction import excerpt
from agentv_ci.text_safety import printable

__all__ = ["CONSOLE", "CONSOLE_VERBOSE", "ConsoleLimits", "failure_lines"]

_INDENT = "    "


@dataclass(frozen=True)
class ConsoleLimits:
    """How much of one failing test the console shows (each cut is marked)."""

    checks: int  # failed checks (and graders with only a reason or an error) listed
    value: int  # characters of one expected or actual value, reason or error
    answer: int  # characters of the answer excerpt (0: not shown)


CONSOLE = ConsoleLimits(checks=3, value=120, answer=0)
CONSOLE_VERBOSE = ConsoleLimits(checks=20, value=400, answer=600)


def _graders_of(result: TestResult) -> list[GraderResult]:
    """The failing graders; for an aggregated row of repeated attempts, its first failing attempt's."""
    found = failing_graders(result)
    if found:
        return found
    return next((graders for graders in map(failing_graders, result.trials) if graders), [])


def _value(text: str | None, limit: int) -> str:
    return printable(excerpt(text, limit))


def _grader_lines(grader: GraderResult, limits: ConsoleLimits) -> list[str]:
    """One line per failed check of `grader`, else one for its error or its judge's reason."""
    lines: list[str] = []
    for owner, check in failed_checks(grader):
        label = _value(check.path or owner.name, limits.value)
        if check.expected is not None or check.actual is not None:
            expected = _value(check.expected, limits.value) if check.expected is not None else "-"
            actual = _value(check.actual, limits.value) if check.actual is not None else "-"
            lines.append(f"x {label}: expected {expected}, got {actual}")
        else:
            evidence = f" - {_value(check.evidence, limits.value)}" if check.evidence else ""
            lines.append(f"x {label}: {_value(check.text, limits.value)}{evidence}")
    name = _value(grader.name, limits.value)
    if grader.error:
        lines.append(f"x {name}: error: {_value(grader.error, limits.value)}")
    reason = judge_reason(grader)
    if reason:
        lines.append(f"x {name} ({grader.score:.2f}): {_value(reason, limits.value * 2)}")
    if not lines:  # a low score with nothing said about it
        lines.append(f"x {name}: score {grader.score:.2f}")
    return lines


def failure_lines(result: TestResult, limits: ConsoleLimits = CONSOLE) -> list[str]:
    """The indented lines under a failed or errored test's line: at most `limits.checks` checks
    (the rest counted), the execution error in full (capped) and, when set, the answer excerpt."""
    lines: list[str] = []
    for grader in _graders_of(result):
        lines += _grader_lines(grader, limits)
        if len(lines) > limits.checks:
            break
    shown = lines[: limits.checks]
    if len(lines) > limits.checks:  # counted, not built: a grader may have thousands of checks
        total = sum(len(failed_checks(g)) or 1 for g in _graders_of(result))
        shown.append(f"... {max(total, len(lines))} failed check(s) in all (the reports list them)")
    if result.error and limits.answer:  # the result line shows the error's first line only
        shown.append(f"error: {_value(result.error, limits.value * 2)}")
    if limits.answer and result.output:
        shown.append(f"answer: {_value(result.output, limits.answer)}")
    return [_INDENT + line for line in shown]
