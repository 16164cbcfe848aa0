"""A check shared by the tests of everything that spawns a process group (hooks, CLI agents)."""

from __future__ import annotations

import asyncio
import os
import signal
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
    """For each delay, start `start(command)` (a shell command that backgrounds a child which writes its
    pid, then sleeps 30 s), let the loop run `delay` iterations of `asyncio.sleep(step_s(delay))`, then
    cancel. Every task must end in CancelledError and no child may be left alive.

    The child is looked for by its pid, not by a flag it writes after a fixed sleep: on a loaded box
    the cancel can come later than any such sleep, and the flag would then be written before it."""

    async def main() -> None:
        tasks = []
        for delay in delays:
            pid_file = tmp_path / f"child-{delay}"
            # Any shell: `$$` of a `sh -c` that then execs the sleep is the sleeping child's own pid.
            child = f"echo $$ > {pid_file}.tmp; mv {pid_file}.tmp {pid_file}; exec sleep 30"
            task = asyncio.ensure_future(start(f"(sh -c '{child}') & wait"))
            for _ in range(delay):
                await asyncio.sleep(step_s(delay))
            task.cancel()
            tasks.append(task)
        outcomes = await asyncio.gather(*tasks, return_exceptions=True)
        assert all(isinstance(o, asyncio.CancelledError) for o in outcomes)

    asyncio.run(main())
    time.sleep(0.5)  # a spawn the cancel raced has had its chance to start a child
    alive = [pid for pid in map(_pid, tmp_path.glob("child-*")) if pid is not None and _running(pid)]
    for pid in alive:  # don't leave them behind, then fail
        os.kill(pid, signal.SIGKILL)
    assert alive == [], f"children left running: {alive}"


def _pid(path: Path) -> int | None:
    text = path.read_text().strip() if not path.name.endswith(".tmp") else ""
    return int(text) if text else None


def _running(pid: int) -> bool:
    """Alive and not a zombie (a killed child is a zombie until whoever adopted it reaps it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
