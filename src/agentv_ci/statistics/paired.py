"""The suite-level comparison: paired, with the test as the unit (Miller 2024, "Adding Error Bars
to Evals", arXiv:2411.00640, sections 2.2 and 4).

Each matched test contributes one difference: its head score minus its base score, where a score is
already the mean of the test's attempts. Repeats are thereby clustered within their test instead of
pooled as independent draws (which would understate the error when tests differ in difficulty), and
the pairing removes the between-test variance both runs share.

The one-sided p-value is exact where the central limit theorem is weakest: with at most
`EXACT_UP_TO` tests that moved, it is the sign-flip randomization test (under an unchanged agent
each test's difference is as likely to be negative as positive, so all 2^n sign patterns of the
moved tests are equally likely). Beyond that, the normal approximation of that same randomization
distribution: z = (sum(d) + c) / sqrt(sum(d^2)), with the continuity correction c the smallest
move (half the step of a sum of +-1 moves). That variance is the one the null implies, where
Student's t would estimate it around the observed mean and, with many tests that did not move, run
slightly over its nominal rate (5.6% instead of 5% in bench/noise.py at 1,000 single-sample tests).
The interval is Student's t interval of the mean difference (Miller's), at the level asked.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

from agentv_ci.statistics.descriptive import mean, standard_error
from agentv_ci.statistics.student_t import t_quantile

__all__ = ["EXACT_UP_TO", "PairedDelta", "paired_delta", "sign_flip_p_less"]

EXACT_UP_TO = 24
_MAX_SUMS = 200_000  # distinct partial sums kept by the exact test before it gives way to t


@dataclass(frozen=True)
class PairedDelta:
    mean: float
    stderr: float
    tests: int
    p_less: float  # one-sided p-value of "head scores lower than base"
    floor: float  # the smallest p-value this test could give (exact test: 2^-moved; t: 0)

    def interval(self, confidence: float) -> tuple[float, float]:
        """Two-sided t interval of the mean difference, clamped to [-1, 1]."""
        if self.tests < 2 or self.stderr == 0.0:
            return (self.mean, self.mean)
        half = t_quantile(0.5 + confidence / 2.0, self.tests - 1) * self.stderr
        return (max(-1.0, self.mean - half), min(1.0, self.mean + half))


def sign_flip_p_less(deltas: Sequence[float]) -> float | None:
    """P(sum of randomly signed |deltas| <= the observed sum), exactly; None when too many moved."""
    moved = [abs(d) for d in deltas if d != 0.0]
    if len(moved) > EXACT_UP_TO:
        return None
    observed = round(math.fsum(deltas), 9)
    counts: dict[float, int] = {0.0: 1}
    for size in moved:
        grown: dict[float, int] = {}
        for total, n in counts.items():
            for step in (size, -size):
                key = round(total + step, 9)
                grown[key] = grown.get(key, 0) + n
        counts = grown
        if len(counts) > _MAX_SUMS:
            return None
    at_most = sum(n for total, n in counts.items() if total <= observed + 1e-9)
    return at_most / float(1 << len(moved))


def paired_delta(deltas: Sequence[float]) -> PairedDelta | None:
    """The paired comparison of the per-test differences; None for fewer than two tests."""
    k = len(deltas)
    if k < 2:
        return None
    centre, se = mean(deltas), standard_error(deltas)
    exact = sign_flip_p_less(deltas)
    if exact is not None:
        moved = sum(1 for d in deltas if d != 0.0)
        return PairedDelta(mean=centre, stderr=se, tests=k, p_less=exact, floor=0.5**moved)
    spread = math.sqrt(math.fsum(d * d for d in deltas))
    # continuity: the sum moves in steps of at least twice the smallest move (all +-1: steps of 2)
    step = min(abs(d) for d in deltas if d != 0.0) if spread > 0 else 0.0
    p = min(1.0, NormalDist().cdf((math.fsum(deltas) + step) / spread)) if spread > 0 else 1.0
    return PairedDelta(mean=centre, stderr=se, tests=k, p_less=p, floor=0.0)
