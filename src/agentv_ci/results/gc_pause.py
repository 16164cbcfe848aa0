"""Pause the cyclic garbage collector around bulk work on many results.

Reading, comparing and rendering 100k results allocates hundreds of thousands of containers that
never form cycles; with the run's results alive, each automatic collection rescans all of them
(SARIF for 100k results: 5.8 s with the collector, 0.8 s without). Reference counting still frees
everything; the collector resumes (if it was on) when the block ends, even on an exception.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_gc"]


@contextmanager
def paused_gc(*, freeze: bool = False) -> Iterator[None]:
    """`freeze`: what the block built and still holds moves to the permanent generation when it ends
    (`gc.freeze`), for objects that live until the process ends: else the first collection after
    the pause walks every one of them (~0.3 s for `grade`'s 100k rows)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if was_enabled:
            gc.enable()
