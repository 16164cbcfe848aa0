"""What reporters say about one result: its location, failing graders and their assertions."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path, PurePosixPath

from agentv_ci.model.result import GraderResult, TestResult
from agentv_ci.text_safety import clean_text

__all__ = ["attempts_text", "failing_graders", "grader_failure_text", "repo_relative", "test_label"]


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


def grader_failure_text(grader: GraderResult, *, limit: int = 2000) -> str:
    """`name (type): score` and its failing assertions (composite members included), cleaned and capped."""
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
    for member in grader.scores:
        if member.verdict == "fail" or member.error:
            lines.extend("  " + line for line in grader_failure_text(member, limit=limit).splitlines())
    text = clean_text("\n".join(lines))
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
