"""`--budget-usd`: stop scheduling once the money is spent; the rest is marked not-run. The same count
is the run's actual cost (`spent_usd` in summary.json) that the `max_cost_usd` gate checks."""

from __future__ import annotations


class Budget:
    """Tracks spend across the whole run (every target answer and grader-model reply paid for; cached
    answers are not). Tests in flight finish; no new test starts after the limit."""

    def __init__(self, limit_usd: float | None) -> None:
        self.limit_usd = limit_usd
        self.spent_usd = 0.0
        self.spent_before = 0.0  # `--resume`: what the run being continued already paid (not budgeted)
        self.unpriced = 0  # answers that came with no cost (no price known): the spend is a floor

    def add(self, cost_usd: float | None) -> None:
        if cost_usd is None:
            self.unpriced += 1
        elif cost_usd:
            self.spent_usd += cost_usd

    @property
    def exhausted(self) -> bool:
        return self.limit_usd is not None and self.spent_usd >= self.limit_usd
