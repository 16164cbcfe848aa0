"""What reporters say about one result: its location, failing graders and their assertions."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path, PurePosixPath

from agentv_ci.model.result import AssertionResult, GraderResult, TestResult
from agentv_ci.text_safety import clean_text, excerpt

__all__ = [
    "attempts_text",
    "failing_graders",
    "failure_headline",
    "grader_failure_text",
    "repo_relative",
    "test_label",
]

_REASON_KEYS = ("reasoning", "overall_reasoning")  # where a judge's (or a code grader's) reason is kept


def test_label(result: TestResult) -> str:
    return f"{result.suite}/{result.test_id} [{result.target}]"


@lru_cache(maxsize=1024)  # a run has few eval files and many tests
def repo_relative(eval_path: str | None, repo_root: Path) -> str | None:
    """`eval_path` as a POSIX path relative to `repo_root` when it lies inside it (else as given)."""
    if not eval_path:
        return None
    path = Path(eval_path)
    if path.is_absolute():
        try:
            path = path.resolve().relative_to(repo_root.resolve())
        except ValueError:
            return path.as_posix()
    return PurePosixPath(*path.parts).as_posix()


def failing_graders(result: TestResult) -> list[GraderResult]:
    """Top-level graders that failed or could not score."""
    return [g for g in result.scores if g.verdict == "fail" or g.error]


def grader_failure_text(grader: GraderResult, *, limit: int = 2000, value_limit: int = 200) -> str:
    """`name (type): score` and its failing assertions (composite members included), each with what it
    expected and what came back when the grader says (each value cut at `value_limit`), and the
    judge's reason; cleaned and capped at `limit`."""
    lines = [
        f"{grader.name} ({grader.type}): score {grader.score:.3f}"
        + (" [required]" if grader.required else "")
    ]
    if grader.error:
        lines.append(f"  error: {grader.error}")
    for assertion in grader.assertions:
        if not assertion.passed:
            evidence = f" - {assertion.evidence}" if assertion.evidence else ""
            lines.append(f"  x {assertion.text}{evidence}")
            if assertion.expected is not None:
                lines.append(f"      expected: {excerpt(assertion.expected, value_limit)}")
            if assertion.actual is not None:
                lines.append(f"      actual:   {excerpt(assertion.actual, value_limit)}")
    reason = judge_reason(grader)
    if reason:
        lines.append(f"  reason: {excerpt(reason, value_limit * 2)}")
    for member in grader.scores:
        if member.verdict == "fail" or member.error:
            member_text = grader_failure_text(member, limit=limit, value_limit=value_limit)
            lines.extend("  " + line for line in member_text.splitlines())
    text = clean_text("\n".join(lines))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def judge_reason(grader: GraderResult) -> str | None:
    """The reason a judge (or a code grader) gave for its score, from the grader's details."""
    details = grader.details or {}
    for key in _REASON_KEYS:
        value = details.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _failed_checks(grader: GraderResult) -> list[tuple[GraderResult, AssertionResult]]:
    found = [(grader, a) for a in grader.assertions if not a.passed]
    for member in grader.scores:
        if member.verdict == "fail" or member.error:
            found.extend(_failed_checks(member))
    return found


def failure_headline(result: TestResult, *, value_limit: int = 60) -> str | None:
    """One short line on why a test failed: its first failed check that knows what it expected and
    what came back (`quantity: expected 3, got 5`, plus how many more checks failed), else the
    first judge's reason; None when no grader says either."""
    graders = failing_graders(result) or next(
        (found for found in map(failing_graders, result.trials) if found), []
    )  # an aggregated row of repeated attempts: its first failing attempt's graders
    checks = [pair for g in graders for pair in _failed_checks(g)]
    known = [(g, a) for g, a in checks if a.expected is not None and a.actual is not None]
    if known:
        grader, first = known[0]
        label = first.path or grader.name
        expected = excerpt(first.expected, value_limit)
        actual = excerpt(first.actual, value_limit)
        line = f"{label}: expected {expected}, got {actual}"
        more = len(checks) - 1
        if more:
            line += f" (and {more} more failed check{'s' if more > 1 else ''})"
        return clean_text(line)
    for grader in graders:
        reason = judge_reason(grader)
        if reason:
            return clean_text(f"{grader.name}: {excerpt(' '.join(reason.split()), value_limit * 2)}")
    return None


def attempts_text(result: TestResult) -> str | None:
    """`k/n attempts passed` for repeated tests, else None."""
    agg = result.aggregation
    if agg is not None and agg.total_attempts > 1:
        return f"{agg.passed_attempts}/{agg.total_attempts} attempts passed"
    if len(result.trials) > 1:
        passed = sum(1 for t in result.trials if t.verdict == "pass")
        return f"{passed}/{len(result.trials)} attempts passed"
    return None


def attempt_counts(result: TestResult) -> tuple[int, int] | None:
    agg = result.aggregation
    if agg is not None and agg.total_attempts > 1:
        return agg.passed_attempts, agg.total_attempts
    if len(result.trials) > 1:
        return sum(1 for t in result.trials if t.verdict == "pass"), len(result.trials)
    return None
