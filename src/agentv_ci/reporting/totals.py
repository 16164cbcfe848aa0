"""Counts and means over results, overall and per suite (shared by gates and every reporter).

Outcome of one result (`outcome_of`): `passed`, `failed` (quality failure), `error` (execution
error) or `not_run`. A `threshold` override re-judges conclusive results from their score.
Pass rate and mean score are computed over conclusive results (passed + failed) only; errors are
counted and gated separately.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import msgspec

from agentv_ci.model.result import TestResult

Outcome = Literal["passed", "failed", "error", "not_run"]

__all__ = ["Outcome", "Totals", "outcome_of", "totals_by_suite", "totals_of"]


class Totals(msgspec.Struct, omit_defaults=True):
    """Aggregate of a group of results (a suite, a suite x target, or the whole run)."""

    name: str
    tests: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    not_run: int = 0
    pass_rate: float | None = None  # passed / (passed + failed)
    mean_score: float | None = None  # over passed + failed
    cost_usd: float | None = None
    tokens: int | None = None
    duration_ms: float | None = None

    @property
    def conclusive(self) -> int:
        return self.passed + self.failed


def outcome_of(result: TestResult, threshold: float | None = None) -> Outcome:
    """`passed`, `failed` (quality failure), `error` (execution error) or `not_run`; with `threshold`,
    a conclusive result is re-judged from its score."""
    if result.execution_status == "not_run" or result.verdict == "skip":
        return "not_run"
    if result.execution_status == "execution_error":
        return "error"
    if threshold is not None:
        return "passed" if result.score >= threshold else "failed"
    return "passed" if result.verdict == "pass" else "failed"


def totals_of(
    results: Iterable[TestResult], *, name: str = "overall", threshold: float | None = None
) -> Totals:
    """Counts, pass rate and mean score (over conclusive results), cost, tokens and duration."""
    totals = Totals(name=name)
    scores: list[float] = []
    cost = tokens = duration = 0.0
    has_cost = has_tokens = has_duration = False
    for result in results:
        totals.tests += 1
        outcome = outcome_of(result, threshold)
        if outcome == "passed":
            totals.passed += 1
        elif outcome == "failed":
            totals.failed += 1
        elif outcome == "error":
            totals.errors += 1
        else:
            totals.not_run += 1
        if outcome in ("passed", "failed"):
            scores.append(result.score)
        if result.cost_usd is not None:
            cost += result.cost_usd
            has_cost = True
        if result.token_usage is not None:
            tokens += result.token_usage.total
            has_tokens = True
        if result.duration_ms is not None:
            duration += result.duration_ms
            has_duration = True
    if scores:
        totals.pass_rate = totals.passed / len(scores)
        totals.mean_score = sum(scores) / len(scores)
    totals.cost_usd = round(cost, 6) if has_cost else None
    totals.tokens = int(tokens) if has_tokens else None
    totals.duration_ms = duration if has_duration else None
    return totals


def totals_by_suite(results: Iterable[TestResult], *, threshold: float | None = None) -> list[Totals]:
    """One `Totals` per suite, sorted by suite name."""
    groups: dict[str, list[TestResult]] = {}
    for result in results:
        groups.setdefault(result.suite, []).append(result)
    return [totals_of(groups[name], name=name, threshold=threshold) for name in sorted(groups)]
