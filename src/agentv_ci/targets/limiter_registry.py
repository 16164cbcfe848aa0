"""The run's rate limiters (targets/rate_limits.py), one per event loop and endpoint, and what the
scheduler tells them of the run (`run_progress`): the progress line reads their throttle states."""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from agentv_ci.targets.rate_limits import LimitSettings, RunProgress, TargetLimiter, ThrottleState

_REGISTRY: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Any, TargetLimiter]] = (
    weakref.WeakKeyDictionary()
)
_RUNS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, RunProgress] = weakref.WeakKeyDictionary()


def run_progress() -> RunProgress:
    """The running loop's `RunProgress`: the scheduler keeps `jobs_left` current, every limiter reads it."""
    return _RUNS.setdefault(asyncio.get_running_loop(), RunProgress())


def limiter_for(key: Any, name: str, settings: LimitSettings) -> TargetLimiter:
    """The run's limiter for `key` (endpoint, model, credentials), created on first use. A second
    target sharing it tightens its configured limits to the stricter of the two."""
    limiters = _REGISTRY.setdefault(asyncio.get_running_loop(), {})
    limiter = limiters.get(key)
    if limiter is None:
        limiter = limiters[key] = TargetLimiter(name, settings, run_progress())
    elif settings != limiter.settings:
        limiter.tighten(settings)
    return limiter


def throttle_states() -> list[ThrottleState]:
    """Every limiter of the running loop that has been rate limited, for the progress line."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return []
    return [limiter.state() for limiter in _REGISTRY.get(loop, {}).values() if limiter.limited]
