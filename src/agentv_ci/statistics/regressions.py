"""The one family of "worse than the baseline" tests a run makes: one per compared test (Fisher exact
on its attempts' pass counts) and one per suite (the paired t-test of its mean delta), corrected
together (family.py). compare.py gates on it and bench/noise.py measures it: the same code."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

from agentv_ci.statistics.family import ALPHA, FamilyControl, control_family
from agentv_ci.statistics.fisher import fisher_exact_less, min_p_less
from agentv_ci.statistics.paired import PairedDelta

__all__ = ["PassCounts", "regression_family"]


class PassCounts(NamedTuple):
    base_pass: int
    base_n: int
    head_pass: int
    head_n: int


@lru_cache(maxsize=65536)  # a run has few distinct tables (counts up to the repeat count)
def _worse(counts: PassCounts) -> tuple[float, float]:
    """(p-value, its floor) of "head passes less often than base"."""
    return fisher_exact_less(*counts), min_p_less(*counts)


def regression_family(
    tests: Sequence[PassCounts], suites: Sequence[PairedDelta], alpha: float = ALPHA
) -> FamilyControl:
    """Corrected p-values: the tests' first (in order), then the suites'."""
    evidence = [_worse(counts) for counts in tests]
    return control_family(
        [p for p, _ in evidence] + [s.p_less for s in suites],
        [floor for _, floor in evidence] + [s.floor for s in suites],
        alpha,
    )
