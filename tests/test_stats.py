from __future__ import annotations

import math

import pytest

from agentv_ci.stats import (
    fisher_exact_greater,
    fisher_exact_less,
    mean,
    standard_error,
    stdev,
    welch_interval,
)


def test_fisher_exact_matches_known_values() -> None:
    # scipy.stats.fisher_exact([[5, 0], [1, 4]], alternative="greater") == 0.0238...
    assert fisher_exact_less(5, 5, 1, 5) == pytest.approx(6 / 252)
    assert fisher_exact_less(5, 5, 3, 5) == pytest.approx(56 / 252)
    assert fisher_exact_less(3, 5, 0, 5) == pytest.approx(21 / 252)
    assert fisher_exact_less(5, 5, 5, 5) == pytest.approx(1.0)
    assert fisher_exact_greater(0, 5, 5, 5) == pytest.approx(1 / 252)


def test_fisher_rejects_impossible_counts() -> None:
    with pytest.raises(ValueError, match="bad pass counts"):
        fisher_exact_less(6, 5, 1, 5)
    with pytest.raises(ValueError):
        fisher_exact_less(0, 0, 1, 5)


def test_welch_interval() -> None:
    low, high = welch_interval([1, 2, 3, 4, 5], [2, 3, 4, 5, 6]) or (0.0, 0.0)
    assert (low, high) == pytest.approx((1 - 2.306, 1 + 2.306))  # se 1, df 8
    assert welch_interval([1.0, 1.0], [0.0, 0.0]) == (-1.0, -1.0)
    assert welch_interval([1.0], [0.0, 1.0]) is None


def test_descriptive_statistics() -> None:
    assert mean([]) == 0.0 and stdev([1.0]) == 0.0 and standard_error([1.0]) == 0.0
    assert stdev([2, 4, 4, 4, 5, 5, 7, 9]) == pytest.approx(math.sqrt(32 / 7))
    assert standard_error([1.0, 3.0]) == pytest.approx(1.0)
