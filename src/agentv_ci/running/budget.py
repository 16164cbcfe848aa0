"""`--budget-usd`: stop scheduling once the money is spent; the rest is marked not-run."""

from __future__ import annotations


class Budget:
    """Tracks spend across the whole run. Tests in flight finish; no new test starts after the limit."""

    def __init__(self, limit_usd: float | None) -> None:
        self.limit_usd = limit_usd
        self.spent_usd = 0.0

    def add(self, cost_usd: float | None) -> None:
        if cost_usd:
            self.spent_usd += cost_usd

    @property
    def exhausted(self) -> bool:
        return self.limit_usd is not None and self.spent_usd >= self.limit_usd
