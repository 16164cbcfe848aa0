"""One-sided Fisher exact tests on two pass counts (base, head).

The test conditions on the margins (the attempts on each side and the passes in all), so it is exact
at any sample size, and the margins alone fix the smallest p-value a table can reach
(`min_p_less`). That is what lets `family.py` leave out of the error budget the comparisons that
could never be significant (a test that passed every attempt on both sides, a single sample on each).
"""

from __future__ import annotations

import math

__all__ = ["fisher_exact_greater", "fisher_exact_less", "min_p_greater", "min_p_less"]


def _check_counts(base_pass: int, base_n: int, head_pass: int, head_n: int) -> None:
    if not (0 <= base_pass <= base_n and 0 <= head_pass <= head_n) or base_n == 0 or head_n == 0:
        raise ValueError(f"bad pass counts: {base_pass}/{base_n} vs {head_pass}/{head_n}")


def _pmf(k: int, total_pass: int, n_base: int, n_head: int) -> float:
    """P(the base side holds k of the passes) with the margins fixed (hypergeometric)."""
    total = n_base + n_head
    return math.comb(total_pass, k) * math.comb(total - total_pass, n_base - k) / math.comb(total, n_base)


def fisher_exact_less(base_pass: int, base_n: int, head_pass: int, head_n: int) -> float:
    """p-value of "head passes less often than base": the probability of tables with at least as
    many of the passes on the base side as observed."""
    _check_counts(base_pass, base_n, head_pass, head_n)
    total_pass = base_pass + head_pass
    upper = min(total_pass, base_n)
    return min(1.0, math.fsum(_pmf(k, total_pass, base_n, head_n) for k in range(base_pass, upper + 1)))


def fisher_exact_greater(base_pass: int, base_n: int, head_pass: int, head_n: int) -> float:
    """p-value of "head passes more often than base"."""
    return fisher_exact_less(head_pass, head_n, base_pass, base_n)


def min_p_less(base_pass: int, base_n: int, head_pass: int, head_n: int) -> float:
    """The smallest `fisher_exact_less` any table with these margins can give (every pass that fits
    on the base side): 1.0 when all attempts passed, or none did."""
    _check_counts(base_pass, base_n, head_pass, head_n)
    total_pass = base_pass + head_pass
    return min(1.0, _pmf(min(total_pass, base_n), total_pass, base_n, head_n))


def min_p_greater(base_pass: int, base_n: int, head_pass: int, head_n: int) -> float:
    return min_p_less(head_pass, head_n, base_pass, base_n)
