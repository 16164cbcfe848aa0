"""How hard an HTTP client tries again: one `RetryPolicy`, with parameters where clients differ.

- A transient fault (`retried(status)`, or a connection lost before an answer) spends one of
  `max_retries` and waits the backoff: `backoff_s` doubled each retry, at most `backoff_cap_s`,
  passed through `jitter` (full jitter for model APIs, whose many concurrent callers must not retry
  in step; none for the forges' few calls, whose steps their tests pin).
- A server's advised wait (`Retry-After`, a rate limit's reset) is honoured even above the cap, up
  to `retry_after_ceiling_s`; one under `now_s` says "now" and gets the backoff instead, so a server
  answering `Retry-After: 0` for ever still meets the attempt cap.
- `max_wait_s` bounds the sleeping of one call in all: a wait that does not fit gives up at once
  rather than sleep in vain (None: the call's own deadline bounds it, as a model API's does).
- Any other status is the request's own fault: asked once.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

NOT_RETRIED_5XX = frozenset({501, 505})  # Not Implemented, HTTP Version Not Supported: never works
RETRY_AFTER_CEILING_S = 120.0  # the longest advised wait honoured (a longer one waits this long)


def is_server_fault(status: int) -> bool:
    """A 5xx that may work when asked again (501 and 505 say it never will)."""
    return 500 <= status <= 599 and status not in NOT_RETRIED_5XX


def full_jitter(ceiling_s: float) -> float:
    """A delay drawn evenly from [0, ceiling_s] (AWS's "full jitter")."""
    return random.uniform(0, ceiling_s)


def no_jitter(ceiling_s: float) -> float:
    """The ceiling itself: deterministic steps."""
    return ceiling_s


@dataclass(frozen=True)
class Advice:
    """Ask again: after `wait_s` (the server's word) or, when None, after the policy's backoff."""

    wait_s: float | None = None


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to retry one call (see the module docstring). The defaults are the forges' (GitHub,
    GitLab): 4 attempts, 1 s, 2 s, 4 s, at most 60 s of waiting; model APIs use
    targets/retry_policy.py's `model_api_policy`."""

    max_retries: int = 3
    max_wait_s: float | None = 60.0
    backoff_s: float = 1.0
    backoff_cap_s: float | None = None
    jitter: Callable[[float], float] = no_jitter
    retried: Callable[[int], bool] = is_server_fault
    now_s: float = 0.0
    retry_after_ceiling_s: float = RETRY_AFTER_CEILING_S
    rate_limited_give_up_s: float | None = None  # a call still rate limited this long fails

    def says_now(self, wait_s: float | None) -> bool:
        """An advised wait that means "come back at once" (0, a date in the past)."""
        return wait_s is not None and wait_s < self.now_s

    def delay(self, attempt: int, advised_s: float | None = None) -> float:
        """Seconds to wait before retry number `attempt` (0-based), given the server's advice."""
        if advised_s is not None and not self.says_now(advised_s):
            return min(advised_s, max(self.backoff_cap_s or 0.0, self.retry_after_ceiling_s))
        ceiling = self.backoff_s * (2**attempt)
        if self.backoff_cap_s is not None:
            ceiling = min(self.backoff_cap_s, ceiling)
        return float(self.jitter(ceiling))
