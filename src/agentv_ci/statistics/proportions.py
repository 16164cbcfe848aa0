"""Intervals for pass rates: Wilson's score interval and Clopper-Pearson's exact interval for one,
and for the difference of two Newcombe's square-and-add combination (method 10 of Newcombe 1998)
of the two single intervals.

All stay inside [0, 1] (resp. [-1, 1]) and keep their coverage at small counts and at 0 or 100%,
where the textbook p ± z·se collapses to a point (20/20 would read [1.0, 1.0]). The comparison of a
test with its baseline uses Clopper-Pearson components (`exact=True`): as conservative as the Fisher
exact test whose verdict it sits beside, so the two agree on the edge cases Wilson's would not.
"""

from __future__ import annotations

import math
from statistics import NormalDist

from agentv_ci.statistics.student_t import beta_quantile

__all__ = ["clopper_pearson", "newcombe_difference", "wilson_interval", "z_two_sided"]


def z_two_sided(confidence: float) -> float:
    """The normal quantile of a two-sided interval at `confidence` (1.96 for 0.95)."""
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def wilson_interval(passes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of the pass rate `passes / n` (n >= 1)."""
    if n <= 0 or not 0 <= passes <= n:
        raise ValueError(f"bad pass count: {passes}/{n}")
    z = z_two_sided(confidence)
    rate = passes / n
    denominator = 1.0 + z * z / n
    centre = (rate + z * z / (2 * n)) / denominator
    half = z * math.sqrt(rate * (1.0 - rate) / n + z * z / (4 * n * n)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


def clopper_pearson(passes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Clopper-Pearson exact interval of the pass rate `passes / n` (n >= 1), from beta quantiles."""
    if n <= 0 or not 0 <= passes <= n:
        raise ValueError(f"bad pass count: {passes}/{n}")
    tail = (1.0 - confidence) / 2.0
    low = 0.0 if passes == 0 else beta_quantile(tail, passes, n - passes + 1)
    high = 1.0 if passes == n else beta_quantile(1.0 - tail, passes + 1, n - passes)
    return (low, high)


def newcombe_difference(
    base_pass: int, base_n: int, head_pass: int, head_n: int, confidence: float = 0.95, exact: bool = False
) -> tuple[float, float]:
    """Interval of head rate - base rate from the two single intervals (Newcombe's method 10; with
    `exact`, Clopper-Pearson's instead of Wilson's)."""
    single = clopper_pearson if exact else wilson_interval
    p1, p2 = base_pass / base_n, head_pass / head_n
    l1, u1 = single(base_pass, base_n, confidence)
    l2, u2 = single(head_pass, head_n, confidence)
    delta = p2 - p1
    low = delta - math.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2)
    high = delta + math.sqrt((u2 - p2) ** 2 + (p1 - l1) ** 2)
    return (max(-1.0, low), min(1.0, high))
