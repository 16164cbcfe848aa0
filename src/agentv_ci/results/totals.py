"""Counts and means over results, overall and per suite (shared by gates and every reporter).

Outcome of one result (`outcome_of`): `passed`, `failed` (quality failure), `error` (execution
error) or `not_run`. A `threshold` override re-judges conclusive results from their score.
Pass rate and mean score are computed over conclusive results (passed + failed) only; errors are
counted and gated separately.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable
from typing import Literal

import msgspec

from agentv_ci.model.result import TestResult

Outcome = Literal["passed", "failed", "error", "not_run"]

__all__ = ["FloatSum", "Outcome", "Totals", "TotalsBuilder", "outcome_of", "totals_by_suite", "totals_of"]


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


class FloatSum:
    """`sum()` of floats, one value at a time, with the interpreter's own algorithm (plain addition
    before Python 3.12, Neumaier's compensated summation since), so a running total equals `sum(list)`
    of the same values in the same order, bit for bit, without keeping the list."""

    __slots__ = ("_compensation", "_total")

    def __init__(self) -> None:
        self._total = 0.0
        self._compensation = 0.0

    def add(self, value: float) -> None:
        total = self._total
        if not _COMPENSATED:
            self._total = total + value
            return
        added = total + value
        if abs(total) >= abs(value):
            self._compensation += (total - added) + value
        else:
            self._compensation += (value - added) + total
        self._total = added

    @property
    def value(self) -> float:
        compensation = self._compensation
        if compensation and math.isfinite(compensation):
            return self._total + compensation
        return self._total


_COMPENSATED = sys.version_info >= (3, 12)


class TotalsBuilder:
    """`Totals` of a group of results fed one at a time (a run's results as they are written): the
    same figures as `totals_of` over the same results in the same order, in constant memory."""

    __slots__ = ("_cost", "_duration", "_scores", "_tokens", "name", "threshold", "totals")

    def __init__(self, name: str = "overall", threshold: float | None = None) -> None:
        self.name = name
        self.threshold = threshold
        self.totals = Totals(name=name)
        self._scores = FloatSum()
        self._cost: float | None = None
        self._tokens: float | None = None
        self._duration: float | None = None

    def add(self, result: TestResult, outcome: Outcome | None = None) -> Outcome:
        """Count `result` (its `outcome_of` under this builder's threshold, computed when not given)."""
        totals = self.totals
        if outcome is None:
            outcome = outcome_of(result, self.threshold)
        totals.tests += 1
        if outcome == "passed":
            totals.passed += 1
            self._scores.add(result.score)
        elif outcome == "failed":
            totals.failed += 1
            self._scores.add(result.score)
        elif outcome == "error":
            totals.errors += 1
        else:
            totals.not_run += 1
        if result.cost_usd is not None:
            self._cost = (self._cost or 0.0) + result.cost_usd
        if result.token_usage is not None:
            self._tokens = (self._tokens or 0.0) + result.token_usage.total
        if result.duration_ms is not None:
            self._duration = (self._duration or 0.0) + result.duration_ms
        return outcome

    def build(self) -> Totals:
        """The totals so far (a new `Totals` each call)."""
        counted = self.totals
        totals = Totals(
            name=counted.name,
            tests=counted.tests,
            passed=counted.passed,
            failed=counted.failed,
            errors=counted.errors,
            not_run=counted.not_run,
        )
        conclusive = counted.passed + counted.failed
        if conclusive:
            totals.pass_rate = counted.passed / conclusive
            totals.mean_score = self._scores.value / conclusive
        totals.cost_usd = round(self._cost, 6) if self._cost is not None else None
        totals.tokens = int(self._tokens) if self._tokens is not None else None
        totals.duration_ms = self._duration
        return totals


def totals_of(
    results: Iterable[TestResult], *, name: str = "overall", threshold: float | None = None
) -> Totals:
    """Counts, pass rate and mean score (over conclusive results), cost, tokens and duration."""
    builder = TotalsBuilder(name, threshold)
    for result in results:
        builder.add(result)
    return builder.build()


def totals_by_suite(results: Iterable[TestResult], *, threshold: float | None = None) -> list[Totals]:
    """One `Totals` per suite, sorted by suite name."""
    groups: dict[str, TotalsBuilder] = {}
    for result in results:
        builder = groups.get(result.suite)
        if builder is None:
            builder = groups[result.suite] = TotalsBuilder(result.suite, threshold)
        builder.add(result)
    return [groups[name].build() for name in sorted(groups)]
