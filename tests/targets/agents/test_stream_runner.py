"""The shared runner: events stamped on arrival, bounded output, agents always stopped."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agentv_ci.errors import TargetError
from agentv_ci.targets.agents import stream_runner
from agentv_ci.targets.agents.stream_runner import run_event_stream


class Collect:
    finished = False

    def __init__(self) -> None:
        self.events: list[tuple[dict[str, Any], float]] = []

    def opening(self) -> list[bytes]:
        return []

    def feed(self, event: dict[str, Any], at_ms: float) -> list[bytes]:
        self.events.append((event, at_ms))
        return []


def _run(
    code: str, tmp_path: Path, reader: Collect, timeout: float | None = 20
) -> stream_runner.StreamOutcome:
    return asyncio.run(
        run_event_stream(
            [sys.executable, "-c", code], reader, cwd=tmp_path, env=os.environ, stdin_text="",
            timeout_s=timeout, agent="fake",
        )
    )  # fmt: skip


def test_events_carry_their_arrival_time_and_other_lines_are_kept_for_errors(tmp_path: Path) -> None:
    code = (
        "import time, sys\n"
        "print('{\"n\": 1}', flush=True); time.sleep(0.3); print('not json', flush=True)\n"
        "print('[1, 2]', flush=True); print('{\"n\": 2}', flush=True)\n"
        "sys.stderr.write('oops'); sys.exit(7)\n"
    )
    reader = Collect()
    outcome = _run(code, tmp_path, reader)
    assert [event["n"] for event, _ in reader.events] == [1, 2]
    assert reader.events[1][1] - reader.events[0][1] >= 250
    assert outcome.exit_code == 7 and outcome.stderr_tail == "oops"
    assert outcome.other_lines == ["not json", "[1, 2]"]
    assert outcome.detail() == "oops"


def test_an_overlong_line_is_dropped_and_too_much_output_stops_the_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stream_runner, "MAX_LINE_BYTES", 1000)
    reader = Collect()
    outcome = _run("print('{\"x\": \"' + 'a' * 5000 + '\"}'); print('{\"n\": 1}')", tmp_path, reader)
    assert [event for event, _ in reader.events] == [{"n": 1}] and outcome.dropped_lines == 1
    monkeypatch.setattr(stream_runner, "MAX_OUTPUT_BYTES", 100_000)
    with pytest.raises(TargetError, match="agent output exceeded"):
        _run("import sys\nwhile True: sys.stdout.write('{}\\n' * 1000)", tmp_path, Collect())


def test_a_cancel_kills_the_agents_whole_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    code = (
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "print('{}', flush=True); time.sleep(60)\n"
    )

    async def go() -> None:
        task = asyncio.ensure_future(
            run_event_stream(
                [sys.executable, "-c", code], Collect(), cwd=tmp_path, env=os.environ, stdin_text=None,
                timeout_s=None, agent="fake",
            )
        )  # fmt: skip
        while not pid_file.exists() or not pid_file.read_text():
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    grandchild = int(pid_file.read_text())
    for _ in range(100):  # SIGKILL to the group: the grandchild is gone too
        if not _alive(grandchild):
            break
        time.sleep(0.05)
    else:
        pytest.fail("the agent's child process survived the cancel")


def _alive(pid: int) -> bool:
    """Running (a killed process waiting for init to reap it is a zombie: dead)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_a_missing_working_directory_is_reported(tmp_path: Path) -> None:
    with pytest.raises(TargetError, match=r"working directory .* does not exist"):
        asyncio.run(
            run_event_stream(
                ["true"],
                Collect(),
                cwd=tmp_path / "nope",
                env=os.environ,
                stdin_text=None,
                timeout_s=1,
                agent="fake",
            )
        )
