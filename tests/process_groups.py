"""A check shared by the tests of everything that spawns a process group (hooks, CLI agents)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Iterable
from pathlib import Path
from typing import Any


def assert_cancel_during_spawn_leaves_no_children(
    tmp_path: Path,
    start: Callable[[str], Coroutine[Any, Any, object]],
    delays: Iterable[int],
    *,
    step_s: Callable[[int], float] = lambda delay: 0,
) -> None:
    """For each delay, start `start(command)` (a shell command that backgrounds a child writing a flag
    after 1 s), let the loop run `delay` iterations of `asyncio.sleep(step_s(delay))`, then cancel.
    Every task must end in CancelledError and no child may survive to write its flag."""

    async def main() -> None:
        tasks = []
        for delay in delays:
            flag = tmp_path / f"alive-{delay}"
            task = asyncio.ensure_future(start(f"(sleep 1; echo alive > {flag}) & wait"))
            for _ in range(delay):
                await asyncio.sleep(step_s(delay))
            task.cancel()
            tasks.append(task)
        outcomes = await asyncio.gather(*tasks, return_exceptions=True)
        assert all(isinstance(o, asyncio.CancelledError) for o in outcomes)

    asyncio.run(main())
    time.sleep(1.5)
    assert sorted(p.name for p in tmp_path.glob("alive-*")) == []
