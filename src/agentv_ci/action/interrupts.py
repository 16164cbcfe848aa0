"""SIGINT and SIGTERM in the Action's process: what a cancelled job or `timeout-minutes` sends.

- SIGTERM stops the step as SIGINT does (a `KeyboardInterrupt`). In the Action's container the
  process is PID 1, where a signal with no handler is ignored until the runner's SIGKILL.
- Once a run is interrupted, its reports are written whole: another signal while they are written
  is held back.
- The PR comment of an interrupted run gets a few seconds at most (the runner kills the container
  soon after SIGTERM), and another signal ends it at once.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["TimeUp", "held_back", "sigterm_interrupts", "within"]

_STOPS = (signal.SIGINT, signal.SIGTERM)


class TimeUp(BaseException):
    """The time `within` gives ran out, or another SIGINT/SIGTERM came. A `BaseException`, so the
    `except Exception` of a convenience step (the comment) cannot swallow it."""


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _restore(previous: dict[signal.Signals, object]) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler if callable(handler) or isinstance(handler, int) else signal.SIG_DFL)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """SIGTERM raises `KeyboardInterrupt` in the block, as SIGINT does."""
    if not _in_main_thread():
        yield
        return
    previous: dict[signal.Signals, object] = {signal.SIGTERM: signal.signal(signal.SIGTERM, _interrupt)}
    try:
        yield
    finally:
        _restore(previous)


@contextmanager
def held_back() -> Iterator[list[int]]:
    """SIGINT and SIGTERM are noted (the list yielded), not raised, in the block."""
    received: list[int] = []
    if not _in_main_thread():
        yield received
        return

    def note(signum: int, frame: FrameType | None) -> None:
        received.append(signum)

    previous: dict[signal.Signals, object] = {sig: signal.signal(sig, note) for sig in _STOPS}
    try:
        yield received
    finally:
        _restore(previous)


@contextmanager
def within(seconds: float) -> Iterator[None]:
    """The block gets `seconds` at most and ends at the next SIGINT/SIGTERM: `TimeUp` is raised in it."""
    if not _in_main_thread():
        yield
        return

    def stop(signum: int, frame: FrameType | None) -> None:
        why = "time is up" if signum == signal.SIGALRM else f"{signal.Signals(signum).name} received"
        raise TimeUp(why)

    stops = (*_STOPS, signal.SIGALRM)
    previous: dict[signal.Signals, object] = {sig: signal.signal(sig, stop) for sig in stops}
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        _restore(previous)
