"""Running one workspace hook command, as AgentV v4.42.4 (`workspace/script-executor.ts`).

The command gets AgentV's JSON on stdin (`workspace_path`, `test_id`, `eval_run_id`, `case_input`,
`case_metadata`), and `{{workspace_path}}`, `{{test_id}}`, `{{eval_run_id}}`, `{{case_input}}`,
`{{case_metadata}}` (JSON) substituted in its arguments; unknown `{{names}}` stay as written. A list
is an argv; a string runs through `sh -c`, its substituted values shell-quoted. It runs in its own
process group with the scrubbed child environment (plus the workspace's `env`), and a timeout that
kills the whole group.
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentv_ci.security.child_env import child_environment
from agentv_ci.targets.subprocesses import communicate_capped, spawn_stoppable, stop_group

SETUP_TIMEOUT_MS = 60_000  # before_all / before_each (AgentV)
TEARDOWN_TIMEOUT_MS = 30_000  # after_each / after_all
_PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")


@dataclass(frozen=True)
class HookOutcome:
    ok: bool
    message: str = ""


@dataclass(frozen=True)
class HookContext:
    """What a hook is told about the test it runs for (`test_id` `__before_all__` for a suite)."""

    workspace_path: Path
    test_id: str
    eval_run_id: str
    case_input: str | None = None
    case_metadata: dict[str, Any] | None = None

    def payload(self) -> dict[str, Any]:
        return {
            "workspace_path": str(self.workspace_path),
            "test_id": self.test_id,
            "eval_run_id": self.eval_run_id,
            "case_input": self.case_input,
            "case_metadata": self.case_metadata,
        }

    def variables(self) -> dict[str, str]:
        """The `{{name}}` values of the argv (AgentV: missing inputs are empty strings)."""
        return {
            "workspace_path": str(self.workspace_path),
            "test_id": self.test_id,
            "eval_run_id": self.eval_run_id,
            "case_input": self.case_input or "",
            "case_metadata": json.dumps(self.case_metadata) if self.case_metadata else "",
        }


def interpolate_command(command: list[str] | str, variables: dict[str, str]) -> list[str]:
    """The argv to run: placeholders substituted (shell-quoted inside a `sh -c` string)."""
    if isinstance(command, str):

        def quoted(match: re.Match[str]) -> str:
            value = variables.get(match.group(1))
            return match.group(0) if value is None else shlex.quote(value)

        return ["sh", "-c", _PLACEHOLDER.sub(quoted, command)]

    def plain(match: re.Match[str]) -> str:
        value = variables.get(match.group(1))
        return match.group(0) if value is None else value

    return [_PLACEHOLDER.sub(plain, str(arg)) for arg in command]


def describe(command: list[str] | str) -> str:
    return command if isinstance(command, str) else shlex.join(str(a) for a in command)


async def run_hook(
    command: list[str] | str,
    *,
    cwd: Path,
    context: HookContext,
    timeout_ms: int,
    env: dict[str, str] | None = None,
) -> HookOutcome:
    """Run one hook command to completion; never raises (but lets a cancellation through)."""
    argv = interpolate_command(command, context.variables())
    shown = describe(command)
    timeout_s = timeout_ms / 1000
    try:
        starting = asyncio.create_subprocess_exec(
            *argv,
            cwd=str(cwd),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
            env=child_environment(env),  # scrubbed: the hook gets the workspace's `env:`, not secrets
        )
        process = await spawn_stoppable(starting)
    except OSError as exc:
        return HookOutcome(False, f"cannot start hook {shown!r} in {cwd}: {exc}")
    try:
        output, _ = await asyncio.wait_for(
            communicate_capped(process, json.dumps(context.payload()).encode()), timeout_s
        )
    except (TimeoutError, asyncio.CancelledError) as exc:
        await stop_group(process)  # the hook's children too, also on Ctrl-C
        if isinstance(exc, asyncio.CancelledError):
            raise
        return HookOutcome(False, f"hook {shown!r} timed out after {timeout_s:g}s")
    if process.returncode != 0:
        tail = output.decode("utf-8", errors="replace").strip()[-400:]
        return HookOutcome(False, f"hook {shown!r} exited with code {process.returncode}: {tail}")
    return HookOutcome(True)
