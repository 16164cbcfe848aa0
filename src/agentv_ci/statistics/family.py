"""Error control over one run's comparisons: at most `alpha` chance that an unchanged agent has any
comparison called significant, whatever the suite's size.

The family is trimmed first (Tarone 1990): a Fisher test's margins fix the smallest p-value it can
reach, so a test that passed every attempt on both sides, or ran once on each, can never be
significant and need not spend any of the error budget. The family size M is the smallest number
such that at most M comparisons can reach `alpha / M`; only those are in the family. Within it,
Holm's step-down (Holm 1979) multiplies the k-th smallest p-value by M - k + 1.

Why family-wise error (Holm) and not the false discovery rate (Benjamini-Hochberg): a named
regression blocks a pull request and someone must chase it, so each name should be real. Against
an unchanged agent the two coincide (every discovery is false), so BH would buy no lower false-block
rate; it would only let 5% of the names in a blocked run be noise.

Comparisons with a continuous statistic (the suite-level t-tests) have no floor: min p 0, always in.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["ALPHA", "FamilyControl", "control_family"]

ALPHA = 0.05


@dataclass(frozen=True)
class FamilyControl:
    """The adjusted p-values (in the order given) and the family they were adjusted for."""

    adjusted: tuple[float, ...]
    size: int  # M: the comparisons that could reach significance (the error budget's divisor)
    alpha: float

    def significant(self, index: int) -> bool:
        return self.adjusted[index] < self.alpha


def _family_size(min_ps: Sequence[float], alpha: float) -> int:
    """Tarone's M: the smallest m >= 1 with #{min_p <= alpha / m} <= m."""
    ordered = sorted(min_ps)
    m = max(1, bisect_right(ordered, 0.0))
    while bisect_right(ordered, alpha / m) > m:
        m += 1
    return m


def control_family(p_values: Sequence[float], min_ps: Sequence[float], alpha: float = ALPHA) -> FamilyControl:
    """Adjust `p_values` for the family of comparisons whose smallest reachable p-values are `min_ps`
    (same order). A comparison outside the trimmed family gets min(1, M·p), which is >= alpha."""
    if len(p_values) != len(min_ps):
        raise ValueError("one min_p per p-value")
    if not p_values:
        return FamilyControl((), 0, alpha)
    size = _family_size(min_ps, alpha)
    cut = alpha / size
    adjusted = [min(1.0, size * p) for p in p_values]
    members = sorted(
        (p, i) for i, (p, floor) in enumerate(zip(p_values, min_ps, strict=True)) if floor <= cut
    )
    running = 0.0
    for step, (p, index) in enumerate(members):
        running = max(running, min(1.0, (size - step) * p))  # Holm: monotone in the order of p
        adjusted[index] = running
    return FamilyControl(tuple(adjusted), size, alpha)
