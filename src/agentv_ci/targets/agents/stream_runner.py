"""Run an agent CLI and feed its newline-delimited JSON events to a reader, as they arrive.

The agent runs in its own process group (a timeout or a cancel kills it and its children), without a
shell (argv as given). Each event is stamped with its arrival time, so a tool call's duration is the
time between the event that started it and the one that ended it. Output is bounded: a line longer
than `MAX_LINE_BYTES` is dropped (and counted), and more than `MAX_OUTPUT_BYTES` in all stops the
agent with an error. Lines that are not JSON objects are kept (the last few) for error messages.

A reader may talk back (an agent speaking a protocol on stdin, such as ACP): `opening()` and `feed()`
return bytes to write, and `finished` tells the runner the conversation is over, after which the
agent gets `EXIT_GRACE_S` to exit before its group is killed.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import msgspec

from agentv_ci.deadlines import timed_out
from agentv_ci.errors import TargetError, TargetTimeout
from agentv_ci.targets.subprocesses import spawn_stoppable, stop_group

MAX_LINE_BYTES = 8 * 1024 * 1024
MAX_OUTPUT_BYTES = 256 * 1024 * 1024
STDERR_TAIL_BYTES = 8 * 1024
EXIT_GRACE_S = 2.0
_CHUNK = 64 * 1024
_DECODER = msgspec.json.Decoder()


class EventReader(Protocol):
    """What the runner feeds. `at_ms` is milliseconds since the agent started."""

    finished: bool

    def opening(self) -> list[bytes]: ...

    def feed(self, event: dict[str, Any], at_ms: float) -> list[bytes]: ...


@dataclass
class StreamOutcome:
    """How the agent ended, besides what its events said."""

    exit_code: int | None  # None: stopped by us once the conversation was over
    stderr_tail: str
    other_lines: list[str] = field(default_factory=list)  # the last stdout lines that were not JSON events
    dropped_lines: int = 0
    started_wall: float = 0.0  # time.time() at start (for ISO timestamps)
    duration_ms: float = 0.0

    def detail(self) -> str:
        """The most useful text to show when the agent failed: stderr, else its non-JSON output."""
        text = self.stderr_tail.strip() or "\n".join(self.other_lines).strip()
        return text[-1000:]


async def run_event_stream(
    argv: Sequence[str],
    reader: EventReader,
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdin_text: str | None,
    timeout_s: float | None,
    agent: str,
) -> StreamOutcome:
    """Start `argv`, write `stdin_text` (then close stdin, unless the reader talks back), feed every
    JSON event to `reader`, and wait for the agent to exit. Raises `TargetError` when the executable
    cannot start, on timeout, and when the output exceeds `MAX_OUTPUT_BYTES`."""
    if not cwd.is_dir():
        raise TargetError(f"{agent}: working directory {cwd} does not exist")
    started = time.perf_counter()
    outcome = StreamOutcome(exit_code=None, stderr_tail="", started_wall=time.time())
    try:
        process = await spawn_stoppable(
            asyncio.create_subprocess_exec(
                *argv,
                cwd=str(cwd),
                env=dict(env),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        )
    except FileNotFoundError:
        raise TargetError(
            f"{agent}: executable {argv[0]!r} was not found on PATH "
            f"(install {agent}, or set `executable:` on the target in targets.yaml)"
        ) from None
    except PermissionError:
        raise TargetError(f"{agent}: executable {argv[0]!r} is not executable") from None
    try:
        async with asyncio.timeout(timeout_s):
            await _converse(process, reader, outcome, stdin_text, started)
    except TimeoutError:
        await stop_group(process)
        raise TargetTimeout(f"{agent} {timed_out(timeout_s or 0)}") from None
    except BaseException:
        await stop_group(process)
        raise
    outcome.duration_ms = (time.perf_counter() - started) * 1000
    return outcome


async def _converse(
    process: asyncio.subprocess.Process,
    reader: EventReader,
    outcome: StreamOutcome,
    stdin_text: str | None,
    started: float,
) -> None:
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    stdin = process.stdin
    opening = reader.opening()
    interactive = bool(opening)
    await _write(stdin, [stdin_text.encode("utf-8")] if stdin_text is not None else [])
    await _write(stdin, opening)
    if not interactive:
        stdin.close()
    stderr_task = asyncio.ensure_future(_tail(process.stderr, outcome))
    others: deque[str] = deque(maxlen=20)
    total = 0
    buffer = bytearray()
    overlong = False
    while not reader.finished:
        chunk = await process.stdout.read(_CHUNK)
        if not chunk:
            break
        total += len(chunk)
        if total > MAX_OUTPUT_BYTES:
            raise TargetError(f"agent output exceeded {MAX_OUTPUT_BYTES // (1024 * 1024)} MiB; stopped")
        at_ms = (time.perf_counter() - started) * 1000
        buffer.extend(chunk)
        while not reader.finished:
            end = buffer.find(b"\n")
            if end < 0:
                if len(buffer) > MAX_LINE_BYTES:  # one line too long: drop it up to its end
                    buffer.clear()
                    overlong = True
                break
            line = bytes(buffer[:end])
            del buffer[: end + 1]
            if overlong or len(line) > MAX_LINE_BYTES:
                overlong = False
                outcome.dropped_lines += 1
                continue
            replies = _dispatch(line, reader, at_ms, others)
            await _write(stdin, replies)
    if buffer.strip() and not overlong and not reader.finished:
        await _write(stdin, _dispatch(bytes(buffer), reader, (time.perf_counter() - started) * 1000, others))
    outcome.other_lines = list(others)
    if reader.finished:
        if not stdin.is_closing():
            stdin.close()
        try:
            outcome.exit_code = await asyncio.wait_for(process.wait(), EXIT_GRACE_S)
        except TimeoutError:
            await stop_group(process)  # the conversation is over: an agent server that stays up is ended
            outcome.exit_code = None
    else:
        outcome.exit_code = await process.wait()
    await stderr_task


def _dispatch(line: bytes, reader: EventReader, at_ms: float, others: deque[str]) -> list[bytes]:
    stripped = line.strip()
    if not stripped:
        return []
    try:
        event = _DECODER.decode(stripped)
    except msgspec.DecodeError:
        event = None
    if not isinstance(event, dict):
        others.append(stripped.decode("utf-8", errors="replace")[:500])
        return []
    return reader.feed(event, at_ms)


async def _write(stdin: asyncio.StreamWriter, payloads: list[bytes]) -> None:
    if not payloads or stdin.is_closing():
        return
    try:
        for payload in payloads:
            stdin.write(payload)
        await stdin.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass  # the agent stopped reading: its exit code and stderr tell why


async def _tail(stream: asyncio.StreamReader, outcome: StreamOutcome) -> None:
    kept = bytearray()
    while chunk := await stream.read(_CHUNK):
        kept.extend(chunk)
        if len(kept) > STDERR_TAIL_BYTES:
            del kept[: len(kept) - STDERR_TAIL_BYTES]
    outcome.stderr_tail = kept.decode("utf-8", errors="replace")
