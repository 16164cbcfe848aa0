"""Running one workspace hook command, as AgentV v4.42.4 (`workspace/script-executor.ts`).

The command gets AgentV's JSON on stdin (`workspace_path`, `test_id`, `eval_run_id`, `case_input`,
`case_metadata`), and `{{workspace_path}}`, `{{test_id}}`, `{{eval_run_id}}`, `{{case_input}}`,
`{{case_metadata}}` (JSON) substituted in its arguments; unknown `{{names}}` stay as written. A list
is an argv: each value is one argument, as it is. A string runs through `sh -c`, and so does the
code string of a shell the argv starts (`["bash", "-c", "..."]`): there the data values
(`test_id`, `eval_run_id`, `case_input`, `case_metadata`) are `"$AGENTV_..."` expansions of
environment variables, never shell code, and one inside quotes or a nested shell is refused
(`command_problems`, security/shell_values.py); `{{workspace_path}}` is substituted as written,
and must be a plain path there. It runs in its own process group with the scrubbed child
environment (plus the workspace's `env`), and a timeout that kills the whole group.
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
from agentv_ci.security.hook_commands import (
    DATA_VARIABLES,
    HOOK_COMMAND,
    PLACEHOLDER,
    code_strings,
    command_problems,
)
from agentv_ci.security.shell_values import UnsafePathError, plain_path, variable
from agentv_ci.targets.subprocesses import communicate_capped, spawn_stoppable, stop_group

SETUP_TIMEOUT_MS = 60_000  # before_all / before_each (AgentV)
TEARDOWN_TIMEOUT_MS = 30_000  # after_each / after_all


class HookCommandError(ValueError):
    """A hook command that would let data run as code, or use an unsafe path in a shell."""


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


def interpolate_command(command: list[str] | str, context: HookContext) -> tuple[list[str], dict[str, str]]:
    """The argv to run and the variables its shell strings need. Raises `HookCommandError` for a
    command `command_problems` refuses, or a `{{workspace_path}}` in a shell string that is not plain."""
    problems = command_problems(command)
    if problems:
        raise HookCommandError(problems[0][1])
    variables = context.variables()
    code = code_strings(command)
    env: dict[str, str] = {}
    data = {name: variable(var, variables[name]) for name, var in DATA_VARIABLES.items()}

    def in_code(text: str) -> str:
        """A code string: data as `"$VAR"` (none is left outside a shell's), the path as written."""
        runner: dict[str, str] = {}
        if "workspace_path" in text:
            try:
                runner["workspace_path"] = plain_path(context.workspace_path, "the workspace path")
            except UnsafePathError as exc:
                raise HookCommandError(str(exc)) from None
        rendered, used = HOOK_COMMAND.render(text, data, runner)
        env.update(used)
        return rendered

    def plain(match: re.Match[str]) -> str:
        value = variables.get(match.group(1))
        return match.group(0) if value is None else value

    if isinstance(command, str):
        return ["sh", "-c", in_code(command)], env
    argv = [
        in_code(str(arg)) if index in code else PLACEHOLDER.sub(plain, str(arg))
        for index, arg in enumerate(command)
    ]
    return argv, env


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
    shown = describe(command)
    try:
        argv, variables = interpolate_command(command, context)
    except HookCommandError as exc:
        return HookOutcome(False, f"refusing to run hook {shown!r}: {exc}")
    timeout_s = timeout_ms / 1000
    try:
        starting = asyncio.create_subprocess_exec(
            *argv,
            cwd=str(cwd),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
            # scrubbed: the hook gets the workspace's `env:` (and its data variables), not secrets
            env=child_environment({**(env or {}), **variables}),
        )
        process = await spawn_stoppable(starting)
    except (OSError, ValueError) as exc:  # E2BIG, a NUL byte in a value
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
