"""Virtual time for code that takes an injected `Clock` (agentv_ci/clock.py): tests that neither
sleep nor busy-wait.

`FakeClock.run(coro)` runs `coro` on an asyncio loop whose time is the fake clock's: whenever every
task waits, the loop jumps straight to its next timer instead of sleeping (the approach of trio's
`MockClock(autojump_threshold=0)`). Everything on that loop (`asyncio.sleep`, `asyncio.timeout`,
the clock's own `sleep`) then agrees on one timeline, so a 10 s hold takes no real time and a test
asserts exact virtual durations. Real I/O does not mix with it: talk to an httpx `MockTransport`.
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Coroutine, Mapping
from typing import Any, TypeVar

T = TypeVar("T")


class FakeClock:
    """A monotonic clock that moves only when every task of its loop waits (see the module doc)."""

    def __init__(self, start: float = 10_000.0) -> None:
        self.t = start  # not 0: real monotonic readings are never near it either

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)  # a timer on the virtual loop: the jump moves self.t

    def run(self, main: Coroutine[Any, Any, T]) -> T:
        """Run `main` to completion on a loop driven by this clock."""
        loop = _VirtualTimeLoop(self)
        try:
            return loop.run_until_complete(main)
        finally:
            loop.close()


class _JumpingSelector(selectors.BaseSelector):
    """Polls the real selector without blocking; when nothing is ready, moves the clock to the
    loop's next timer (the timeout the loop asked to block for)."""

    def __init__(self, clock: FakeClock) -> None:
        self._clock = clock
        self._real = selectors.DefaultSelector()

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        events = self._real.select(0)
        if not events and timeout:
            self._clock.t += timeout
        elif not events and timeout is None:
            raise RuntimeError("virtual time: every task waits and no timer is set (a deadlock)")
        return events

    def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._real.register(fileobj, events, data)

    def unregister(self, fileobj: Any) -> selectors.SelectorKey:
        return self._real.unregister(fileobj)

    def modify(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
        return self._real.modify(fileobj, events, data)

    def get_map(self) -> Mapping[Any, selectors.SelectorKey]:
        return self._real.get_map()

    def close(self) -> None:
        self._real.close()


class _VirtualTimeLoop(asyncio.SelectorEventLoop):
    def __init__(self, clock: FakeClock) -> None:
        super().__init__(_JumpingSelector(clock))
        self._fake_clock = clock

    def time(self) -> float:
        return self._fake_clock.t
