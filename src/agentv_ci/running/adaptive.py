"""`run --adaptive-repeats MAX`: the run's side of statistics/sequential.py. It knows the baseline's
pass counts (test x target -> passes, attempts) and how many comparisons the run can make, and gives
each adaptive job its rule."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from agentv_ci.model.result import TestResult
from agentv_ci.results.attempts import aggregate_attempts
from agentv_ci.statistics.sequential import AdaptiveRule, looks

__all__ = ["AdaptiveRepeats", "baseline_counts", "conclusive_counts"]

Key = tuple[str, str, str]
_CONCLUSIVE = ("ok", "quality_failure")


def conclusive_counts(attempts: Iterable[TestResult]) -> tuple[int, int]:
    """(passes, attempts) over the attempts that could be graded (an execution error is neither)."""
    passes = total = 0
    for attempt in attempts:
        if attempt.execution_status in _CONCLUSIVE and attempt.verdict != "skip":
            total += 1
            passes += attempt.verdict == "pass"
    return passes, total


def baseline_counts(results: Iterable[TestResult]) -> dict[Key, tuple[int, int]]:
    """The baseline's pass counts per test x target, from its attempts (rows of one key merged, as
    compare does); a row that never ran to a verdict is left out (nothing to compare with)."""
    counts: dict[Key, tuple[int, int]] = {}
    for row in aggregate_attempts(results):
        if row.execution_status not in _CONCLUSIVE or row.verdict == "skip":
            continue
        if row.trials:
            passes, total = conclusive_counts(row.trials)
        elif row.aggregation is not None and row.aggregation.total_attempts > 1:
            total = row.aggregation.total_attempts  # clamped: a hostile row may claim 5 of 3
            passes = min(max(row.aggregation.passed_attempts, 0), total)
        else:
            passes, total = int(row.verdict == "pass"), 1
        if total:
            counts[(row.suite, row.test_id, row.target)] = (passes, total)
    return counts


@dataclass(frozen=True)
class AdaptiveRepeats:
    """MAX attempts and the baseline's counts. `tests`: the comparisons the run's family can hold
    (the baseline's tests and suites bound Tarone's M: only matched tests are compared)."""

    maximum: int
    baseline: Mapping[Key, tuple[int, int]] = field(default_factory=dict)

    @cached_property
    def tests(self) -> int:
        return max(1, len(self.baseline) + len({suite for suite, _, _ in self.baseline}))

    @cached_property
    def _rules(self) -> dict[int, AdaptiveRule]:
        return {}

    def rule(self, start: int) -> AdaptiveRule:
        """The rule of a job that starts with `start` attempts (one per start count)."""
        rule = self._rules.get(start)
        if rule is None:
            rule = self._rules[start] = AdaptiveRule(looks(start, self.maximum), tests=self.tests)
        return rule
