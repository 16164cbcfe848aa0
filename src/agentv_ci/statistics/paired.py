"""The suite-level comparison: paired, with the test as the unit (Miller 2024, "Adding Error Bars
to Evals", arXiv:2411.00640, sections 2.2 and 4).

Each matched test contributes one difference: its head score minus its base score, where a score is
already the mean of the test's attempts. Repeats are thereby clustered within their test instead of
pooled as independent draws (which would understate the error when tests differ in difficulty), and
the pairing removes the between-test variance both runs share. The mean difference is tested with
Student's t on k - 1 degrees of freedom.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from agentv_ci.statistics.descriptive import mean, standard_error
from agentv_ci.statistics.student_t import t_cdf, t_quantile

__all__ = ["PairedDelta", "paired_delta"]


@dataclass(frozen=True)
class PairedDelta:
    mean: float
    stderr: float
    tests: int
    p_less: float  # one-sided p-value of "head scores lower than base"

    def interval(self, confidence: float) -> tuple[float, float]:
        """Two-sided t interval of the mean difference, clamped to [-1, 1]."""
        if self.tests < 2 or self.stderr == 0.0:
            return (self.mean, self.mean)
        half = t_quantile(0.5 + confidence / 2.0, self.tests - 1) * self.stderr
        return (max(-1.0, self.mean - half), min(1.0, self.mean + half))


def paired_delta(deltas: Sequence[float]) -> PairedDelta | None:
    """The paired comparison of the per-test differences; None for fewer than two tests."""
    k = len(deltas)
    if k < 2:
        return None
    centre, se = mean(deltas), standard_error(deltas)
    # se 0: every test moved by the same amount, a certain drop (or none)
    p = (0.0 if centre < 0 else 1.0) if se == 0.0 else t_cdf(centre / se, k - 1)
    return PairedDelta(mean=centre, stderr=se, tests=k, p_less=p if not math.isnan(p) else 1.0)
