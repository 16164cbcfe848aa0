"""`--budget-usd`: work counts against the budget before it is sent; once the money is spent no new
attempt starts and the rest is marked not-run. The same count is the run's actual cost (`spent_usd`
in summary.json) that the `max_cost_usd` gate checks.

Admission (docs/running.md, "Budget"): an attempt of a test (its target's answers and the grader
models' replies for them) is sent only when the money spent, plus the estimate of every attempt in
flight that it has not paid yet, plus the estimate of this one, is within the budget; or when nothing
is in flight and the spend is still under the budget (that lone attempt is the only one that may go
over). An attempt's estimate is the dearest attempt of its target so far (paid, or read back from the
response cache at its recorded cost); before that is known the attempt goes alone. So `--workers N`
ends at most one attempt's cost over the budget, as `--workers 1` does, as long as no attempt costs
more than the dearest one of its target before it.

`--resume`: what the run being continued already paid (`spent_before`) counts against the budget.
"""

from __future__ import annotations

import asyncio
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["Admission", "Budget"]


class Admission:
    """One attempt let through: what it was expected to cost and what it has cost so far."""

    __slots__ = ("estimate", "paid", "priced", "target")

    def __init__(self, target: Hashable, estimate: float | None) -> None:
        self.target = target
        self.estimate = estimate  # None: its target's price is not known yet
        self.paid = 0.0  # spent while it ran (the target's answers and their grader models)
        self.priced: float | None = None  # what its answers cost, spent or read from the cache

    def note(self, cost_usd: float) -> None:
        self.priced = (self.priced or 0.0) + cost_usd

    @property
    def unpaid(self) -> float:
        """What it may still spend: the estimate less what it paid (unknown: the whole budget)."""
        return float("inf") if self.estimate is None else max(self.estimate - self.paid, 0.0)


# The attempt the current task works for: its spend (also the grader models', told through
# `Budget.add` from the grading tasks, which inherit the context) is charged to it.
_paying: ContextVar[Admission | None] = ContextVar("agentv_ci_budget_admission", default=None)


class Budget:
    """Tracks spend across the whole run (every target answer and grader-model reply paid for; cached
    answers are not) and lets attempts through while they fit (the module docstring)."""

    def __init__(self, limit_usd: float | None) -> None:
        self.limit_usd = limit_usd
        self.spent_usd = 0.0
        self.spent_before = 0.0  # `--resume`: what the run being continued already paid
        self.unpriced = 0  # answers that came with no cost (no price known): the spend is a floor
        self.refused = False  # an attempt was held back: the run stopped at the budget
        self._in_flight: list[Admission] = []
        self._dearest: dict[Hashable, float] = {}
        self._released: asyncio.Event | None = None  # made on first wait, inside the running loop

    @property
    def total_usd(self) -> float:
        return self.spent_before + self.spent_usd

    def add(self, cost_usd: float | None) -> None:
        admission = _paying.get()
        if cost_usd is None:
            self.unpriced += 1
            if admission is not None:
                admission.note(0.0)  # the budget cannot see it: holding money back for it buys nothing
            return
        if cost_usd:
            self.spent_usd += cost_usd
        if admission is not None:
            admission.paid += cost_usd
            admission.note(cost_usd)

    def note_cached(self, cost_usd: float | None) -> None:
        """An answer read back from the response cache: free now, but its recorded cost prices its
        target for the attempts that will not find theirs in the cache."""
        admission = _paying.get()
        if admission is not None:
            admission.note(cost_usd or 0.0)

    @property
    def exhausted(self) -> bool:
        return self.limit_usd is not None and self.total_usd >= self.limit_usd

    @property
    def reached(self) -> bool:
        """The run stopped at the budget (an attempt was held back) or ended over it."""
        return self.refused or (self.limit_usd is not None and self.total_usd > self.limit_usd)

    def _fits(self, estimate: float | None) -> bool:
        assert self.limit_usd is not None
        if not self._in_flight:
            return True  # under the budget (checked by the caller): a lone attempt goes
        if estimate is None:
            return False
        committed = self.total_usd + sum(a.unpaid for a in self._in_flight)
        return committed + estimate <= self.limit_usd

    async def admit(self, target: Hashable) -> Admission | None:
        """Wait until the next attempt of `target` fits; None once the budget is spent (then no
        attempt starts any more). Without a limit, every attempt goes at once."""
        estimate = self._dearest.get(target)
        if self.limit_usd is None:
            return Admission(target, estimate)
        while True:
            if self.exhausted:
                self.refused = True
                return None
            estimate = self._dearest.get(target)
            if self._fits(estimate):
                admission = Admission(target, estimate)
                self._in_flight.append(admission)
                return admission
            if self._released is None:
                self._released = asyncio.Event()
            released = self._released
            await released.wait()  # an attempt in flight ended: its cost is known now

    @contextmanager
    def paying(self, admission: Admission) -> Iterator[None]:
        """Charge what is spent inside to `admission`; when it ends, learn its target's price and
        let waiting attempts look again."""
        token = _paying.set(admission)
        try:
            yield
        finally:
            _paying.reset(token)
            if admission.priced is not None:
                known = self._dearest.get(admission.target, 0.0)
                self._dearest[admission.target] = max(known, admission.priced)
            if admission in self._in_flight:
                self._in_flight.remove(admission)
                released, self._released = self._released, None
                if released is not None:
                    released.set()
