"""Mean, sample standard deviation and standard error (exactly summed with `math.fsum`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["mean", "standard_error", "stdev"]


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
