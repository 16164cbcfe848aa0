"""Running a grader script: its own process group, stdin payload, a timeout that kills the whole
group, and a cap on captured output (a runaway script can't exhaust memory or stall the run)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass
from pathlib import Path

OUTPUT_CAP = 1024 * 1024  # bytes of stdout/stderr kept
_CHUNK = 64 * 1024


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


async def _read_capped(stream: asyncio.StreamReader, *, fail_over_cap: bool, what: str) -> tuple[bytes, bool]:
    """Read a pipe to EOF keeping at most OUTPUT_CAP bytes. Over the cap: raise (stdout: the
    protocol answer is unusable) or keep draining and report truncation (stderr: diagnostics only)."""
    kept = bytearray()
    truncated = False
    while True:
        chunk = await stream.read(_CHUNK)
        if not chunk:
            return bytes(kept), truncated
        room = OUTPUT_CAP - len(kept)
        if len(chunk) > room:
            if fail_over_cap:
                raise ScriptFailure(f"wrote more than {OUTPUT_CAP // 1024} KiB to {what}")
            kept.extend(chunk[:room])
            truncated = True
        else:
            kept.extend(chunk)


async def run_script(
    argv: list[str], *, stdin: bytes, cwd: Path, timeout_s: float, env: dict[str, str] | None = None
) -> ScriptRun:
    """Run `argv` in a new session (process group). Raises ScriptFailure with a clear message on a
    spawn failure, a timeout (the whole group is killed) or more than OUTPUT_CAP bytes on stdout."""
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=str(cwd),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            env={**os.environ, **(env or {})},
        )
    except (OSError, ValueError) as exc:
        raise ScriptFailure(f"could not start {argv[0]!r} in {cwd}: {exc}") from None
    assert process.stdin and process.stdout and process.stderr

    async def feed() -> None:
        assert process.stdin
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            process.stdin.write(stdin)
            await process.stdin.drain()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            process.stdin.close()

    async def communicate() -> tuple[tuple[bytes, bool], tuple[bytes, bool], int]:
        assert process.stdout and process.stderr
        out, err, _ = await asyncio.gather(
            _read_capped(process.stdout, fail_over_cap=True, what="stdout"),
            _read_capped(process.stderr, fail_over_cap=False, what="stderr"),
            feed(),
        )
        return out, err, await process.wait()

    try:
        (out, _), (err, err_truncated), code = await asyncio.wait_for(communicate(), timeout_s)
    except TimeoutError:
        raise ScriptFailure(f"timed out after {timeout_s:g}s (process group killed)") from None
    finally:
        if process.returncode is None:
            _kill_group(process)
            with contextlib.suppress(ProcessLookupError):
                await process.wait()
        else:
            _kill_group(process)  # stray children left in the group
    return ScriptRun(
        exit_code=code,
        stdout=out.decode("utf-8", errors="replace"),
        stderr=err.decode("utf-8", errors="replace"),
        stderr_truncated=err_truncated,
    )
