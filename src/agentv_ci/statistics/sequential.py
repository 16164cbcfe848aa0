"""Adaptive repeats (`run --adaptive-repeats MAX`): when a test has had enough attempts.

A test starts with its own repeat count and is looked at in rounds: after `start`, `2·start`,
`4·start`, ... attempts, and last at `MAX` (`looks`). At each look it stops when both of its
questions are decided; otherwise it gets attempts up to the next look.

- **Its verdict against the threshold** (the pass bar `bar` on the attempts' pass rate: the
  threshold for `mean` and `confidence_interval`, whose score is the attempts' mean): decided when
  the Clopper-Pearson interval of the pass rate lies wholly on one side of the bar, each side at
  `alpha / L` for `L` looks (Bonferroni over the looks: the chance that any look calls the wrong
  side stays below `alpha`). `decided-pass` / `decided-fail`. No bar (None): nothing to decide.
- **Its comparison with the baseline** (when the baseline row has at least 2 attempts; `bp/bn`
  base, `hp/hn` head): decided when the one-sided Fisher test of "head passes less often" is
  significant at `alpha / (N·L)`, N the run's compared tests (Tarone's family size M <= N, so a
  test stopped here is significant in the gate's family whatever M is: `regression-decided`); or
  when the head already passes at least as often as the base (`hp/hn >= bp/bn`, nothing to find);
  or when it can no longer become significant at `alpha` (the most lenient level the family gives)
  even if every attempt left to MAX fails (statistics/fisher.py: the p-value only falls as head
  failures are added).

Why the error stays controlled under optional stopping: stopping because a test is *not*
significant never makes a later look significant, so it adds no false block; stopping because
it *is* significant spends `alpha / (N·L)` per look and test, `alpha` over all looks and tests
(Bonferroni), and such a test is blocked by the gate's own family test anyway. bench/noise.py checks
the false-block rate by simulation (docs/gates.md, "Adaptive repeats").

`pass_at_k` and `pass_all` verdicts are "any" / "every" of a declared count: more attempts would
change what they mean (a flaky test retried to MAX would pass `pass_at_k`), so those tests keep
their count (running/plan.py); a test without a declared strategy is judged on its attempts' mean.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agentv_ci.statistics.family import ALPHA
from agentv_ci.statistics.fisher import fisher_exact_less
from agentv_ci.statistics.proportions import clopper_pearson

__all__ = ["AdaptiveRule", "Stop", "looks"]

Stop = Literal["decided-pass", "decided-fail", "regression-decided", "max"]


def looks(start: int, maximum: int) -> tuple[int, ...]:
    """The attempt counts a test is looked at: `start`, doubling, and last `maximum`."""
    start = max(1, min(start, maximum))
    counts = [start]
    while counts[-1] < maximum:
        counts.append(min(maximum, counts[-1] * 2))
    return tuple(counts)


@dataclass(frozen=True)
class AdaptiveRule:
    """The decision rule for one test: its `looks` and the run's `tests` compared (N)."""

    looks: tuple[int, ...]
    tests: int = 1
    alpha: float = ALPHA

    @property
    def maximum(self) -> int:
        return self.looks[-1]

    def next_look(self, attempts: int) -> int:
        """How many attempts the test should have after its look at `attempts`."""
        return next((n for n in self.looks if n > attempts), self.maximum)

    def verdict(self, passes: int, attempts: int, bar: float | None) -> Stop | None:
        """The threshold verdict, when decided: the pass rate's interval on one side of `bar`."""
        if bar is None:
            return "decided-pass"
        one_side = self.alpha / len(self.looks)
        low, high = clopper_pearson(passes, attempts, 1.0 - 2.0 * one_side)
        if low >= bar:
            return "decided-pass"
        if high < bar:
            return "decided-fail"
        return None

    def comparison(
        self, passes: int, attempts: int, base: tuple[int, int] | None
    ) -> Stop | Literal["no"] | None:
        """`regression-decided`, `no` (decided: no regression to find) or None (undecided)."""
        if base is None or base[1] < 2:
            return "no"
        base_pass, base_n = base
        if passes * base_n >= base_pass * attempts:
            return "no"
        if fisher_exact_less(base_pass, base_n, passes, attempts) <= self.alpha / (
            self.tests * len(self.looks)
        ):
            return "regression-decided"
        if fisher_exact_less(base_pass, base_n, passes, self.maximum) > self.alpha:
            return "no"  # futile: even all remaining attempts failing could not make it significant
        return None

    def decide(
        self, passes: int, attempts: int, bar: float | None, base: tuple[int, int] | None = None
    ) -> Stop | None:
        """Why the test stops after `attempts` (with `passes`), or None: it needs more attempts."""
        compared = self.comparison(passes, attempts, base)
        if compared == "regression-decided":
            return compared
        verdict = self.verdict(passes, attempts, bar)
        if compared == "no" and verdict is not None:
            return verdict
        return "max" if attempts >= self.maximum else None
