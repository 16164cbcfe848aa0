"""Workspaces: `workspace.template` copied per test, and hooks with timeouts.

Hooks (`before_all`, `before_each`, `after_each`, `after_all`) each take `command` (a shell string or
an argv list), `timeout_ms` (60000 for setup, 30000 for teardown) and `cwd`. They get AgentV's stdin
JSON (`workspace_path`, `test_id`, `eval_run_id`, `case_input`, `case_metadata`). A failing `before_*`
hook makes the test an execution error (stage `setup`); a failing `after_*` hook only warns.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentv_ci.model.suite import Suite, Test
from agentv_ci.prompting import render_input
from agentv_ci.security.child_env import child_environment
from agentv_ci.targets.subprocesses import communicate_capped, spawn_stoppable, stop_group

SETUP_TIMEOUT_MS = 60_000
TEARDOWN_TIMEOUT_MS = 30_000


class HookError(Exception):
    """A `before_*` hook failed (non-zero exit, timeout, cannot start)."""


@dataclass
class HookOutcome:
    ok: bool
    message: str = ""


def workspace_of(test: Test, suite: Suite) -> dict[str, Any] | None:
    return test.workspace if test.workspace is not None else suite.workspace


def _hook(workspace: dict[str, Any], name: str) -> dict[str, Any] | None:
    hooks = workspace.get("hooks")
    if not isinstance(hooks, dict) or hooks.get("enabled") is False:
        return None
    hook = hooks.get(name)
    if isinstance(hook, str | list):
        return {"command": hook}
    if isinstance(hook, dict) and ("command" in hook or "script" in hook):
        return hook
    return None


async def run_hook(
    hook: dict[str, Any], *, cwd: Path, payload: dict[str, Any], default_timeout_ms: int, env: dict[str, str]
) -> HookOutcome:
    """Run one hook command; never raises."""
    command = hook.get("command", hook.get("script"))
    timeout_s = float(hook.get("timeout_ms") or default_timeout_ms) / 1000
    hook_cwd = cwd / str(hook["cwd"]) if hook.get("cwd") else cwd
    options: dict[str, Any] = {
        "cwd": str(hook_cwd),
        "stdin": asyncio.subprocess.PIPE,
        "stdout": asyncio.subprocess.PIPE,
        "stderr": asyncio.subprocess.STDOUT,
        "start_new_session": True,
        "env": child_environment(env),  # scrubbed: the hook gets the workspace's `env:`, not the runner's
    }
    try:
        if isinstance(command, list):
            starting = asyncio.create_subprocess_exec(*[str(part) for part in command], **options)
        else:
            starting = asyncio.create_subprocess_shell(str(command), **options)
        process = await spawn_stoppable(starting)
    except OSError as exc:
        return HookOutcome(False, f"cannot start hook {command!r}: {exc}")
    try:
        output, _ = await asyncio.wait_for(
            communicate_capped(process, json.dumps(payload).encode()), timeout_s
        )
    except (TimeoutError, asyncio.CancelledError) as exc:
        await stop_group(process)  # the hook's children too, also on Ctrl-C
        if isinstance(exc, asyncio.CancelledError):
            raise
        return HookOutcome(False, f"hook {command!r} timed out after {timeout_s:g}s")
    if process.returncode != 0:
        tail = output.decode("utf-8", errors="replace").strip()[-400:]
        return HookOutcome(False, f"hook {command!r} exited with code {process.returncode}: {tail}")
    return HookOutcome(True)


@dataclass
class _SuiteState:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    started: bool = False
    failure: str | None = None
    suite: Suite | None = None
    workspace: dict[str, Any] | None = None


class WorkspaceManager:
    """Per-suite `before_all`/`after_all` and per-test template copies + `before_each`/`after_each`."""

    def __init__(self, run_id: str, warnings: list[str]) -> None:
        self.run_id = run_id
        self.warnings = warnings
        self._suites: dict[str, _SuiteState] = {}

    def _payload(self, test: Test | None, workspace_path: Path | None) -> dict[str, Any]:
        return {
            "workspace_path": str(workspace_path) if workspace_path else None,
            "test_id": test.id if test else None,
            "eval_run_id": self.run_id,
            "case_input": render_input(test.input, inline_files=False) if test else None,
            "case_metadata": test.metadata if test else None,
        }

    async def _run_hook(
        self,
        workspace: dict[str, Any],
        name: str,
        *,
        test: Test | None,
        path: Path | None,
        cwd: Path,
        timeout_ms: int,
    ) -> HookOutcome:
        """Run the workspace's `name` hook with its `env` and AgentV's payload; ok when there is none."""
        hook = _hook(workspace, name)
        if hook is None:
            return HookOutcome(True)
        env = {str(k): str(v) for k, v in (workspace.get("env") or {}).items()}
        return await run_hook(
            hook, cwd=cwd, payload=self._payload(test, path), default_timeout_ms=timeout_ms, env=env
        )

    async def enter(self, suite: Suite, test: Test) -> Path | None:
        """Prepare the test's workspace; raises `HookError` when setup fails."""
        workspace = workspace_of(test, suite)
        if not workspace:
            return None
        eval_dir = Path(suite.path).parent
        state = self._suites.setdefault(suite.path, _SuiteState())
        async with state.lock:
            if not state.started:
                state.started = True
                state.suite, state.workspace = suite, workspace
                outcome = await self._run_hook(
                    workspace, "before_all", test=None, path=None, cwd=eval_dir, timeout_ms=SETUP_TIMEOUT_MS
                )
                if not outcome.ok:
                    state.failure = f"before_all: {outcome.message}"
        if state.failure:
            raise HookError(state.failure)
        path: Path | None = None
        template = workspace.get("template")
        if template:
            source = Path(str(template))
            source = source if source.is_absolute() else eval_dir / source
            path = Path(tempfile.mkdtemp(prefix="agentv-ci-ws-"))
            try:
                await asyncio.to_thread(shutil.copytree, source, path, dirs_exist_ok=True, symlinks=True)
            except OSError as exc:
                shutil.rmtree(path, ignore_errors=True)
                raise HookError(f"cannot copy workspace template {source}: {exc}") from None
        outcome = await self._run_hook(
            workspace, "before_each", test=test, path=path, cwd=path or eval_dir, timeout_ms=SETUP_TIMEOUT_MS
        )
        if not outcome.ok:
            if path is not None:
                shutil.rmtree(path, ignore_errors=True)
            raise HookError(f"before_each: {outcome.message}")
        return path

    async def leave(self, suite: Suite, test: Test, path: Path | None, *, keep: bool = False) -> None:
        """Teardown after a test (warnings only), and `after_all` after the suite's last test."""
        workspace = workspace_of(test, suite)
        if not workspace:
            return
        eval_dir = Path(suite.path).parent
        outcome = await self._run_hook(
            workspace,
            "after_each",
            test=test,
            path=path,
            cwd=path or eval_dir,
            timeout_ms=TEARDOWN_TIMEOUT_MS,
        )
        if not outcome.ok:
            self.warnings.append(f"{test.id}: after_each: {outcome.message}")
        if path is not None and not keep:
            shutil.rmtree(path, ignore_errors=True)

    async def close(self) -> None:
        """`after_all` for every suite whose `before_all` ran (at the end of the run)."""
        for state in self._suites.values():
            if not state.started or state.workspace is None or state.suite is None:
                continue
            outcome = await self._run_hook(
                state.workspace,
                "after_all",
                test=None,
                path=None,
                cwd=Path(state.suite.path).parent,
                timeout_ms=TEARDOWN_TIMEOUT_MS,
            )
            if not outcome.ok:
                self.warnings.append(f"{state.suite.name}: after_all: {outcome.message}")
