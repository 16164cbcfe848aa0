"""A rate-limited server in virtual time (tests/fakes/virtual_clock.py), for the limiter's tests: the
in-process twin of tests/fakes/rate_limited_server.py, without sockets, so seconds of traffic at
hundreds of requests a second run in a fraction of a real second and the same way every time.

`Bucket` admits `rate` requests/s with a burst of `burst`; `drive` runs workers that take the
limiter's admission, wait one round trip, and give back an answer or a 429 as the bucket says,
waiting out each 429 as targets/http.py does. `learn` brings a limiter to a learned state through
that traffic (its public API only); `answer_for` then sends at its pace to a server with no limit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from agentv_ci.targets.rate_limits import LimitSettings, RunProgress, TargetLimiter
from tests.fakes.virtual_clock import FakeClock


class Bucket:
    """A token bucket of `rate` requests/s, full (`burst`) at the start."""

    def __init__(self, clock: FakeClock, rate: float, burst: float = 10.0) -> None:
        self.clock, self.rate, self.burst = clock, rate, burst
        self._tokens, self._at = burst, clock.now()
        self.answered = 0
        self.limited = 0

    def admit(self) -> bool:
        now = self.clock.now()
        self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
        self._at = now
        if self._tokens >= 1:
            self._tokens -= 1
            self.answered += 1
            return True
        self.limited += 1
        return False


@dataclass(frozen=True)
class Traffic:
    workers: int = 50
    rtt_s: float = 0.05
    retry_after_s: float = 1.0


async def drive(
    limiter: TargetLimiter, bucket: Bucket, until: Callable[[], bool], traffic: Traffic = Traffic()
) -> None:
    """Workers send to `bucket` through `limiter` until `until()` says stop; those in flight finish."""
    clock = bucket.clock

    async def worker() -> None:
        while not until():
            await limiter.acquire()
            admitted = bucket.admit()
            await clock.sleep(traffic.rtt_s)
            if admitted:
                limiter.release_ok(traffic.rtt_s)
            else:
                await limiter.wait_limited(limiter.release_limited(traffic.retry_after_s))

    await asyncio.gather(*(worker() for _ in range(traffic.workers)))


async def learn(
    clock: FakeClock,
    limit: float,
    *,
    episodes: int,
    run: RunProgress | None = None,
    rtt_s: float = 0.05,
) -> TargetLimiter:
    """A limiter that met a server of `limit` requests/s through `episodes` 429 episodes (one: a
    first measure; two: a limit seen once; later ones confirm it when they agree on its pace)."""
    limiter = TargetLimiter("t", LimitSettings(), run, clock=clock)
    traffic = Traffic(workers=max(5, int(limit * rtt_s * 3)), rtt_s=rtt_s)
    await drive(limiter, Bucket(clock, limit), lambda: limiter.episodes >= episodes, traffic)
    return limiter


async def answer_for(limiter: TargetLimiter, clock: FakeClock, seconds: float, rtt_s: float = 0.0) -> int:
    """Requests sent one at a time at the limiter's pace, each answered at once (reporting a round
    trip of `rtt_s`); returns how many."""
    assert limiter.rate is not None  # a learned pace: acquire() moves the clock
    started, answered = clock.now(), 0
    while clock.now() - started < seconds:
        await limiter.acquire()
        limiter.release_ok(rtt_s or None)
        answered += 1
    return answered
