"""The run's rate limiters (targets/rate_limits.py), one per event loop and endpoint, and what the
scheduler tells them of the run (`run_progress`): the progress line reads their throttle states."""

from __future__ import annotations

import asyncio
import weakref
from dataclasses import dataclass
from typing import Any

from agentv_ci.clock import SYSTEM_CLOCK, Clock
from agentv_ci.targets.rate_limits import LimitSettings, RunProgress, TargetLimiter


@dataclass
class ThrottleState:
    """What the progress line shows: a target held back by its server's rate limit."""

    name: str
    limited: int  # 429/529 answers so far
    waited_s: float  # total time requests spent held by the server's waits
    hold_s: float  # how much longer the current hold lasts (0 when none)
    rate: float | None  # the learned requests/s (None: not limited yet)
    concurrency: int | None


def _state(limiter: TargetLimiter) -> ThrottleState:
    concurrency = None if limiter.window == float("inf") else int(limiter.window)
    hold = limiter.holding_s()
    return ThrottleState(limiter.name, limiter.limited, limiter.waited_s, hold, limiter.rate, concurrency)


_REGISTRY: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Any, TargetLimiter]] = (
    weakref.WeakKeyDictionary()
)
_RUNS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, RunProgress] = weakref.WeakKeyDictionary()


def run_progress() -> RunProgress:
    """The running loop's `RunProgress`: the scheduler keeps `jobs_left` current, every limiter reads it."""
    return _RUNS.setdefault(asyncio.get_running_loop(), RunProgress())


def limiter_for(
    key: Any, name: str, settings: LimitSettings, *, clock: Clock = SYSTEM_CLOCK
) -> TargetLimiter:
    """The run's limiter for `key` (endpoint, model, credentials), created on first use (reading
    `clock`). A second target sharing it tightens its configured limits to the stricter of the two."""
    limiters = _REGISTRY.setdefault(asyncio.get_running_loop(), {})
    limiter = limiters.get(key)
    if limiter is None:
        limiter = limiters[key] = TargetLimiter(name, settings, run_progress(), clock=clock)
    elif settings != limiter.settings:
        limiter.tighten(settings)
    return limiter


def throttle_states() -> list[ThrottleState]:
    """Every limiter of the running loop that has been rate limited, for the progress line."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return []
    return [_state(limiter) for limiter in _REGISTRY.get(loop, {}).values() if limiter.limited]
