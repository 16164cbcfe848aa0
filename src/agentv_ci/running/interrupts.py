"""Ctrl-C and SIGTERM while a run's tests run: stop within a second, whatever the run is doing.

asyncio's own Ctrl-C handling cancels the main task, which takes effect only when a task next
waits. A run can go a long time without waiting: a mock or cached target answers at once, and the
taking back a large dataset's spooled tests skips those a `--resume` or a `--test-id` leaves out. So the
handlers here, Python-level and run between two bytecodes, do two things on the first signal:
cancel the main task (the tests in flight end at their next `await`, which every attempt reaches:
running/scheduler.py), and set `requested`, which the loops that never wait check (the taking of
the spooled tests, running/plan.py `iter_jobs`). A second signal raises `KeyboardInterrupt` at once.

Before and after the tests (loading, planning, reports) SIGINT is Python's `KeyboardInterrupt`
and SIGTERM is mapped to it by the CLI (cli.py). A SIGINT the parent process ignored (a background
job of a non-interactive shell) stays ignored; SIGTERM is honoured."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

__all__ = ["StopSignals"]

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopSignals:
    """The run's stop request, set by SIGINT or SIGTERM while `installed()`."""

    def __init__(self) -> None:
        self.requested = False
        self._task: asyncio.Task[Any] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def attach(self) -> None:
        """Called in the main task once the event loop runs: what the first signal cancels."""
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        if self.requested and self._task is not None:  # a signal came while the loop started
            self._task.cancel()

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self.requested:
            raise KeyboardInterrupt  # the second signal: stop at once
        self.requested = True
        task, loop = self._task, self._loop
        if task is None or loop is None or task.done() or loop.is_closed():
            raise KeyboardInterrupt  # no loop to stop (yet, or any more)
        task.cancel()
        loop.call_soon_threadsafe(lambda: None)  # wake a loop waiting in select()

    @contextmanager
    def installed(self) -> Iterator[StopSignals]:
        """SIGINT and SIGTERM handled here for the `with` block, the previous handlers restored."""
        previous: dict[signal.Signals, Any] = {}
        try:
            for sig in _SIGNALS:
                old = signal.getsignal(sig)
                if old is signal.SIG_IGN and sig == signal.SIGINT:
                    continue  # ignored by whoever started us: stays ignored
                signal.signal(sig, self._on_signal)
                previous[sig] = old
        except ValueError:  # not the main thread: asyncio's own Ctrl-C handling applies
            pass
        try:
            yield self
        finally:
            for sig, old in previous.items():
                signal.signal(sig, old if old is not None else signal.SIG_DFL)
