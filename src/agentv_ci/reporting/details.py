"""What reporters say about one result: its location, failing graders and their assertions, and the
one place where the size of that text is set for JUnit, SARIF and the Markdown summary.

Every piece of test text a report writes is capped (`security.redaction.excerpt` marks the cut), whatever
the answer, the error or the number of graders: a file's size grows with the number of tests, never
with what one test holds. Full reports (JUnit, SARIF) get `REPORT` limits; the Markdown summary,
which must fit a PR comment, gets the `SUMMARY` ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path, PurePosixPath

from agentv_ci.model.result import AssertionResult, GraderResult, TestResult
from agentv_ci.security.redaction import excerpt, redact
from agentv_ci.text_safety import clean_text

__all__ = [
    "REPORT",
    "SUMMARY",
    "TextLimits",
    "attempts_text",
    "failed_checks",
    "failing_graders",
    "failure_headline",
    "failure_text",
    "grader_failure_text",
    "repo_relative",
    "test_label",
]

_REASON_KEYS = ("reasoning", "overall_reasoning")  # where a judge's (or a code grader's) reason is kept


@dataclass(frozen=True)
class TextLimits:
    """Characters of one test's text a report shows (each cut is marked)."""

    graders: int  # its failing graders and their failed checks, all together
    grader: int  # one failing grader
    value: int  # one expected or actual value of a failed check
    answer: int  # its answer excerpt
    input: int  # its input excerpt
    error: int  # its execution error
    message: int  # a one-line message (JUnit's `message` attribute, a SARIF finding's text)


REPORT = TextLimits(graders=2000, grader=1000, value=200, answer=2000, input=2000, error=2000, message=500)
SUMMARY = TextLimits(graders=2000, grader=1000, value=120, answer=1500, input=500, error=1000, message=300)


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


def grader_failure_text(
    grader: GraderResult, *, limit: int = REPORT.grader, value_limit: int = REPORT.value
) -> str:
    """`name (type): score` and its failing assertions (composite members included), each with what it
    expected and what came back when the grader says (each value cut at `value_limit`), and the
    judge's reason; cleaned and capped at `limit` (lines past it are not even built: a grader may
    have thousands of checks)."""
    lines = [
        f"{grader.name} ({grader.type}): score {grader.score:.3f}"
        + (" [required]" if grader.required else "")
    ]
    if grader.error:
        lines.append(f"  error: {grader.error[: limit + 1]}")
    size = sum(len(line) for line in lines)
    for assertion in grader.assertions:
        if size > limit:
            break
        if not assertion.passed:
            evidence = f" - {assertion.evidence[: limit + 1]}" if assertion.evidence else ""
            added = [f"  x {assertion.text[: limit + 1]}{evidence}"]
            if assertion.expected is not None:
                added.append(f"      expected: {excerpt(assertion.expected, value_limit)}")
            if assertion.actual is not None:
                added.append(f"      actual:   {excerpt(assertion.actual, value_limit)}")
            lines += added
            size += sum(len(line) + 1 for line in added)
    reason = judge_reason(grader)
    if reason and size <= limit:
        lines.append(f"  reason: {excerpt(reason, value_limit * 2)}")
        size += len(lines[-1])
    for member in grader.scores:
        if size > limit:
            break
        if member.verdict == "fail" or member.error:
            member_text = grader_failure_text(member, limit=limit, value_limit=value_limit)
            lines.extend("  " + line for line in member_text.splitlines())
            size += len(member_text)
    text = clean_text("\n".join(lines))
    return text if len(text) <= limit else redact(text[: limit - 1]) + "…"  # no piece of a secret at the cut


def failure_text(result: TestResult, limits: TextLimits = REPORT, separator: str = "\n") -> str:
    """The failing graders of `result`, each as `grader_failure_text`, together at most
    `limits.graders` characters (joined by `separator`); the graders left out are counted."""
    failing = failing_graders(result)
    parts: list[str] = []
    used = 0
    for number, grader in enumerate(failing):
        if used >= limits.graders:
            parts.append(f"… and {len(failing) - number} more failing grader(s)")
            break
        room = min(limits.grader, limits.graders - used)
        text = grader_failure_text(grader, limit=room, value_limit=limits.value)
        parts.append(text)
        used += len(text) + len(separator)
    return separator.join(parts)


def judge_reason(grader: GraderResult) -> str | None:
    """The reason a judge (or a code grader) gave for its score, from the grader's details."""
    details = grader.details or {}
    for key in _REASON_KEYS:
        value = details.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def failed_checks(grader: GraderResult) -> list[tuple[GraderResult, AssertionResult]]:
    """The failed checks of `grader` and of its failing composite members, each with its grader."""
    found = [(grader, a) for a in grader.assertions if not a.passed]
    for member in grader.scores:
        if member.verdict == "fail" or member.error:
            found.extend(failed_checks(member))
    return found


def failure_headline(result: TestResult, *, value_limit: int = 60) -> str | None:
    """One short line on why a test failed: its first failed check that knows what it expected and
    what came back (`quantity: expected 3, got 5`, plus how many more checks failed), else the
    first judge's reason; None when no grader says either."""
    graders = failing_graders(result) or next(
        (found for found in map(failing_graders, result.trials) if found), []
    )  # an aggregated row of repeated attempts: its first failing attempt's graders
    checks = [pair for g in graders for pair in failed_checks(g)]
    known = [(g, a) for g, a in checks if a.expected is not None and a.actual is not None]
    if known:
        grader, first = known[0]
        label = excerpt(first.path or grader.name, value_limit)  # a default name holds the value
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
            name = excerpt(grader.name, value_limit)
            return clean_text(f"{name}: {excerpt(' '.join(reason.split()), value_limit * 2)}")
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
