"""Child processes in their own session (agents, hooks) that a cancel (Ctrl-C, timeout) always stops.

asyncio alone kills only the direct child when a cancel lands during the spawn, and leaves its pipe
transports open until the loop is closed ("Event loop is closed" at exit); children started in a new
session would keep running after agentv-ci exits.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Awaitable


async def spawn_stoppable(starting: Awaitable[asyncio.subprocess.Process]) -> asyncio.subprocess.Process:
    """Await a `create_subprocess_*` call (with `start_new_session=True`) so that a cancel arriving
    meanwhile still gets the process, kills its whole group, and re-raises the cancel."""
    task = asyncio.ensure_future(starting)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        try:
            process = await task
        except OSError:
            raise asyncio.CancelledError from None
        await stop_group(process)
        raise


def kill_group(process: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def stop_group(process: asyncio.subprocess.Process) -> None:
    """Kill the process group, reap it and close its pipes while the loop still runs."""
    kill_group(process)
    await process.wait()
    transport = getattr(process, "_transport", None)
    if transport is not None:
        transport.close()


OUTPUT_TAIL_BYTES = 64 * 1024  # what is kept of an agent's stderr or a hook's output (the tail)
_CHUNK = 64 * 1024


async def drain_tail(stream: asyncio.StreamReader | None, keep: int = OUTPUT_TAIL_BYTES) -> bytes:
    """Read `stream` to EOF keeping only its last `keep` bytes: a child printing without end costs a
    bounded amount of memory and never stalls on a full pipe."""
    if stream is None:
        return b""
    tail = bytearray()
    while True:
        chunk = await stream.read(_CHUNK)
        if not chunk:
            return bytes(tail)
        tail.extend(chunk)
        if len(tail) > keep:
            del tail[: len(tail) - keep]


async def communicate_capped(
    process: asyncio.subprocess.Process, stdin: bytes | None = None, keep: int = OUTPUT_TAIL_BYTES
) -> tuple[bytes, bytes]:
    """`process.communicate(stdin)` keeping only the last `keep` bytes of stdout and of stderr."""

    async def feed() -> None:
        pipe = process.stdin
        if pipe is None:
            return
        try:
            if stdin:
                pipe.write(stdin)
                await pipe.drain()
            pipe.close()
        except (BrokenPipeError, ConnectionResetError):
            pass

    out, err, _ = await asyncio.gather(
        drain_tail(process.stdout, keep), drain_tail(process.stderr, keep), feed()
    )
    await process.wait()
    return out, err
