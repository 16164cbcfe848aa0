"""Intervals for pass rates: Wilson's score interval for one, Newcombe's hybrid score interval
(method 10 of Newcombe 1998) for the difference of two.

Both stay inside [0, 1] (resp. [-1, 1]) and keep their coverage at small counts and at 0 or 100%,
where the textbook p ± z·se collapses to a point (20/20 would read [1.0, 1.0]).
"""

from __future__ import annotations

import math
from statistics import NormalDist

__all__ = ["newcombe_difference", "wilson_interval", "z_two_sided"]


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


def newcombe_difference(
    base_pass: int, base_n: int, head_pass: int, head_n: int, confidence: float = 0.95
) -> tuple[float, float]:
    """Interval of head rate - base rate from the two Wilson intervals (Newcombe's method 10)."""
    p1, p2 = base_pass / base_n, head_pass / head_n
    l1, u1 = wilson_interval(base_pass, base_n, confidence)
    l2, u2 = wilson_interval(head_pass, head_n, confidence)
    delta = p2 - p1
    low = delta - math.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2)
    high = delta + math.sqrt((u2 - p2) ** 2 + (p1 - l1) ** 2)
    return (max(-1.0, low), min(1.0, high))
