"""Time as the code reads it: timestamps as results and reports write them (ISO-8601 in UTC with a
`Z` suffix), and the monotonic `Clock` that pacing logic takes injected so its tests run on virtual
time (tests/fakes/virtual_clock.py) instead of sleeping."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Protocol

_last_millis: list[tuple[int, str]] = [(-1, "")]


def iso_z(moment: datetime, *, timespec: str = "milliseconds") -> str:
    """`moment` (timezone-aware, UTC) as ISO-8601 with `Z` instead of `+00:00`."""
    return moment.isoformat(timespec=timespec).replace("+00:00", "Z")


def now_seconds() -> str:
    """Now, ISO-8601 UTC to the second (run start/end)."""
    return iso_z(datetime.now(UTC), timespec="seconds")


def now_millis() -> str:
    """Now, ISO-8601 UTC with milliseconds; formatted once per millisecond (thousands of tests share one)."""
    millis = time.time_ns() // 1_000_000
    last_millis, text = _last_millis[0]
    if millis != last_millis:
        text = iso_z(datetime.fromtimestamp(millis / 1000, UTC))
        _last_millis[0] = (millis, text)
    return text


class Clock(Protocol):
    """Monotonic seconds and a sleep on the same timeline (the rate limiter's and the HTTP client's)."""

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """The real clock: `time.monotonic` and `asyncio.sleep`."""

    now = staticmethod(time.monotonic)  # the builtin itself: no extra frame on the hot path

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


SYSTEM_CLOCK = SystemClock()
