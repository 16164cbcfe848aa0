"""The retry loop every HTTP client runs: try, ask the policy how long to wait, wait, try again.

The decision is `RetryBudget` (no I/O); `call_with_retries` and `call_with_retries_async` are the
same few lines for a blocking and an asyncio client. The client supplies the attempt (which says
`Retry` for an answer worth asking again, returns anything else as final, raises for a failure it
will not retry), the wait (a recorded sleep in tests, a rate limiter's wait for model APIs) and the
words for giving up.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from agentv_ci.retrying.policy import RetryPolicy

T = TypeVar("T")
F = TypeVar("F")

GiveUpReason = Literal["attempts", "wait_budget", "rate_limited"]


@dataclass(frozen=True)
class Retry(Generic[F]):
    """An attempt worth trying again: the client's record of what failed, the server's advised wait,
    and whether it spends a retry (a rate limit that names a real wait does not: the client's
    limiter paces it, and `rate_limited_give_up_s` ends it)."""

    failure: F
    wait_s: float | None = None
    spends: bool = True


@dataclass(frozen=True)
class GiveUp:
    """Why the loop stopped: attempts used up, the wait budget spent, or rate limited too long."""

    reason: GiveUpReason
    attempts: int  # attempts that spent a retry, the last one included


class RetryBudget:
    """What one call has spent of its policy: retries, seconds waited, time rate limited."""

    def __init__(self, policy: RetryPolicy, now: Callable[[], float] | None = None) -> None:
        self.policy = policy
        self.spent = 0
        self.waited_s = 0.0
        self._now = now
        self._started = now() if now is not None else 0.0

    def next_wait(self, retry: Retry[Any]) -> float | GiveUp:
        """Seconds to wait before the next attempt, or why to give up now."""
        policy = self.policy
        if retry.spends:
            if self.spent >= policy.max_retries:
                return GiveUp("attempts", self.spent + 1)
            delay = policy.delay(self.spent, retry.wait_s)
        else:
            limit = policy.rate_limited_give_up_s
            if limit is not None and self._now is not None and self._now() - self._started >= limit:
                return GiveUp("rate_limited", self.spent + 1)
            delay = retry.wait_s or 0.0
        if policy.max_wait_s is not None and self.waited_s + delay > policy.max_wait_s:
            return GiveUp("wait_budget", self.spent + 1)
        self.waited_s += delay
        self.spent += retry.spends
        return delay


def call_with_retries(
    attempt: Callable[[], T | Retry[F]],
    *,
    policy: RetryPolicy,
    wait: Callable[[Retry[F], float], None],
    give_up: Callable[[Retry[F], GiveUp], T],
    now: Callable[[], float] | None = None,
) -> T:
    """`attempt()` until it answers, or `give_up(...)` (which returns a final answer or raises)."""
    budget = RetryBudget(policy, now)
    while True:
        outcome = attempt()
        if not isinstance(outcome, Retry):
            return outcome
        delay = budget.next_wait(outcome)
        if isinstance(delay, GiveUp):
            return give_up(outcome, delay)
        wait(outcome, delay)


async def call_with_retries_async(
    attempt: Callable[[], Awaitable[T | Retry[F]]],
    *,
    policy: RetryPolicy,
    wait: Callable[[Retry[F], float], Awaitable[None]],
    give_up: Callable[[Retry[F], GiveUp], T],
    now: Callable[[], float] | None = None,
) -> T:
    """`call_with_retries` for an asyncio client: the same budget, awaited attempts and waits."""
    budget = RetryBudget(policy, now)
    while True:
        outcome = await attempt()
        if not isinstance(outcome, Retry):
            return outcome
        delay = budget.next_wait(outcome)
        if isinstance(delay, GiveUp):
            return give_up(outcome, delay)
        await wait(outcome, delay)
