"""Rows of the same test x target (AgentV writes one row per attempt) merged into one result with
`trials` and `aggregation`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from agentv_ci.model.result import AttemptSummary, TestResult
from agentv_ci.statistics.descriptive import mean, stdev

__all__ = ["aggregate_attempts", "merge_attempts"]


def _attempt_key(result: TestResult) -> tuple[str, str, str]:
    return (result.suite, result.test_id, result.target)


def aggregate_attempts(results: Iterable[TestResult]) -> list[TestResult]:
    """Merge rows that share suite + test id + target (AgentV writes one row per attempt) into one
    aggregated result with `trials` and `aggregation`; other rows pass through unchanged."""
    groups: dict[tuple[str, str, str], list[TestResult]] = {}
    for result in results:
        groups.setdefault(_attempt_key(result), []).append(result)
    return [merge_attempts(rows) for rows in groups.values()]


def merge_attempts(rows: list[TestResult]) -> TestResult:
    """One result for rows of the same test x target (in the order they were written): the row itself
    when there is one, else the first row with the attempts' mean score, `trials` and `aggregation`."""
    if len(rows) == 1:
        return rows[0]
    conclusive = [r for r in rows if r.execution_status in ("ok", "quality_failure")]
    scores = [r.score for r in conclusive]
    first = rows[0]
    score = mean(scores)
    if not conclusive:
        status: Any = (
            "execution_error" if any(r.execution_status == "execution_error" for r in rows) else "not_run"
        )
        verdict: Any = "skip" if status == "not_run" else "fail"
    else:
        verdict = "pass" if score >= first.threshold else "fail"
        status = "ok" if verdict == "pass" else "quality_failure"
    return msgspec.structs.replace(
        first,
        score=score,
        verdict=verdict,
        execution_status=status,
        attempt=None,
        trials=rows,
        aggregation=AttemptSummary(
            strategy="mean",
            passed_attempts=sum(1 for r in rows if r.verdict == "pass"),
            total_attempts=len(rows),
            scores=scores,
            mean=score,
            stddev=stdev(scores),
        ),
        cost_usd=_sum_optional(r.cost_usd for r in rows),
        duration_ms=_sum_optional(r.duration_ms for r in rows),
        error=next((r.error for r in rows if r.error), None),
    )


def _sum_optional(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None
