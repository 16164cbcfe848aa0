"""Small-sample statistics for noise-aware comparisons (stdlib only).

- `fisher_exact_less`: one-sided Fisher exact p-value that the head pass rate is lower than the base.
- `fisher_exact_greater`: the same for an improvement.
- `welch_interval`: a 95% confidence interval of mean(head) - mean(base) from repeated scores.
- `mean`, `stdev`, `standard_error`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = [
    "fisher_exact_greater",
    "fisher_exact_less",
    "mean",
    "standard_error",
    "stdev",
    "t_critical_95",
    "welch_interval",
]

# Two-sided 95% critical values of Student's t for df = 1..30; above that the normal 1.96 is close enough.
_T95 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values) if values else 0.0


def stdev(values: Sequence[float]) -> float:
    """Sample standard deviation (n-1); 0 for fewer than two values."""
    n = len(values)
    if n < 2:
        return 0.0
    m = mean(values)
    return math.sqrt(math.fsum((v - m) ** 2 for v in values) / (n - 1))


def standard_error(values: Sequence[float]) -> float:
    n = len(values)
    return stdev(values) / math.sqrt(n) if n >= 2 else 0.0


def t_critical_95(df: float) -> float:
    if df < 1:
        return _T95[0]
    if df > 30:
        return 1.96
    return _T95[math.floor(df) - 1]


def _hypergeom_pmf(k: int, total_pass: int, n_base: int, n_head: int) -> float:
    """P(base has k passes) with the margins fixed."""
    total = n_base + n_head
    return math.comb(total_pass, k) * math.comb(total - total_pass, n_base - k) / math.comb(total, n_base)


def fisher_exact_less(base_pass: int, base_n: int, head_pass: int, head_n: int) -> float:
    """One-sided p-value for "head passes less often than base" (2x2 Fisher exact test).

    It sums the probabilities of tables at least as extreme as the observed one, i.e. with at least
    as many of the passes falling on the base side.
    """
    _check_counts(base_pass, base_n, head_pass, head_n)
    total_pass = base_pass + head_pass
    upper = min(total_pass, base_n)
    return min(
        1.0, math.fsum(_hypergeom_pmf(k, total_pass, base_n, head_n) for k in range(base_pass, upper + 1))
    )


def fisher_exact_greater(base_pass: int, base_n: int, head_pass: int, head_n: int) -> float:
    """One-sided p-value for "head passes more often than base"."""
    return fisher_exact_less(head_pass, head_n, base_pass, base_n)


def _check_counts(base_pass: int, base_n: int, head_pass: int, head_n: int) -> None:
    if not (0 <= base_pass <= base_n and 0 <= head_pass <= head_n) or base_n == 0 or head_n == 0:
        raise ValueError(f"bad pass counts: {base_pass}/{base_n} vs {head_pass}/{head_n}")


def welch_interval(base: Sequence[float], head: Sequence[float]) -> tuple[float, float] | None:
    """95% CI of mean(head) - mean(base) (Welch); None when either side has fewer than 2 values."""
    n1, n2 = len(base), len(head)
    if n1 < 2 or n2 < 2:
        return None
    v1, v2 = stdev(base) ** 2 / n1, stdev(head) ** 2 / n2
    delta = mean(head) - mean(base)
    se = math.sqrt(v1 + v2)
    if se == 0.0:
        return (delta, delta)
    df = (v1 + v2) ** 2 / ((v1**2 / (n1 - 1) if v1 else 0.0) + (v2**2 / (n2 - 1) if v2 else 0.0))
    half = t_critical_95(df) * se
    return (delta - half, delta + half)
