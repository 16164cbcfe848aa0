"""Running a grader script: its own process group, stdin payload, a timeout that kills the whole
group, and a cap on captured output (a runaway script can't exhaust memory or stall the run)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentv_ci.deadlines import timed_out
from agentv_ci.security.child_env import child_environment

OUTPUT_CAP = 1024 * 1024  # bytes of stdout/stderr kept
_CHUNK = 64 * 1024
_REAP_GRACE_S = 5.0  # after a kill, how long the pipes may take to close


class ScriptFailure(Exception):
    """The script could not be run to completion (spawn failure, timeout, runaway output)."""


@dataclass(frozen=True)
class ScriptRun:
    exit_code: int
    stdout: str
    stderr: str
    stderr_truncated: bool = False


def _kill_group(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


async def _read_capped(stream: asyncio.StreamReader, on_overflow: Callable[[], None]) -> tuple[bytes, bool]:
    """Read a pipe to EOF keeping at most OUTPUT_CAP bytes; past the cap, call `on_overflow` once and
    keep draining (a pipe left unread would stall the child and keep the transport open)."""
    kept = bytearray()
    overflowed = False
    while True:
        chunk = await stream.read(_CHUNK)
        if not chunk:
            return bytes(kept), overflowed
        room = OUTPUT_CAP - len(kept)
        if len(chunk) > room:
            kept.extend(chunk[:room])
            if not overflowed:
                overflowed = True
                on_overflow()
        else:
            kept.extend(chunk)


async def run_script(
    argv: list[str], *, stdin: bytes, cwd: Path, timeout_s: float, env: dict[str, str] | None = None
) -> ScriptRun:
    """Run `argv` in a new session (process group). Raises ScriptFailure with a clear message on a
    spawn failure, a timeout (the whole group is killed) or more than OUTPUT_CAP bytes on stdout
    (the group is killed as soon as the cap is passed)."""
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=str(cwd),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            env=child_environment(env),  # scrubbed: a PR's script gets no secret unless named
        )
    except (OSError, ValueError) as exc:
        raise ScriptFailure(f"could not start {argv[0]!r} in {cwd}: {exc}") from None
    stdin_pipe, stdout_pipe, stderr_pipe = process.stdin, process.stdout, process.stderr
    assert stdin_pipe is not None and stdout_pipe is not None and stderr_pipe is not None

    async def feed() -> None:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            stdin_pipe.write(stdin)
            await stdin_pipe.drain()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            stdin_pipe.close()

    async def communicate() -> tuple[tuple[bytes, bool], tuple[bytes, bool], int]:
        out, err, _ = await asyncio.gather(
            _read_capped(stdout_pipe, lambda: _kill_group(process)),
            _read_capped(stderr_pipe, lambda: None),
            feed(),
        )
        return out, err, await process.wait()

    task = asyncio.ensure_future(communicate())
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout_s)
        expired = not done
        if expired:
            _kill_group(process)
            done, _ = await asyncio.wait({task}, timeout=_REAP_GRACE_S)
        if not done:  # something outside the group still holds the pipes
            task.cancel()
            transport = getattr(process, "_transport", None)
            if transport is not None:
                transport.close()
            raise ScriptFailure(f"{timed_out(timeout_s)}, process group killed")
        (out, overflowed), (err, err_truncated), code = task.result()
    except asyncio.CancelledError:
        _kill_group(process)
        task.cancel()
        raise
    _kill_group(process)  # stray children left in the group
    if expired:
        raise ScriptFailure(f"{timed_out(timeout_s)}, process group killed")
    if overflowed:
        raise ScriptFailure(f"wrote more than {OUTPUT_CAP // 1024} KiB to stdout (process group killed)")
    return ScriptRun(
        exit_code=code,
        stdout=out.decode("utf-8", errors="replace"),
        stderr=err.decode("utf-8", errors="replace"),
        stderr_truncated=err_truncated,
    )
