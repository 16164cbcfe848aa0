"""The lifecycle hooks of a workspace and of a matrix target, as AgentV v4.42.4 runs them
(`workspace/setup.ts`, `orchestrator.ts`), and the workspace's preflight.

Order, for one target's tests (each target has its own workspace):
- setup: workspace `before_all`, then target `before_all` (`test_id: "__target_before_all__"`);
  per test, workspace `before_each` (its `reset` first), then target `before_each`;
- teardown: per test, target `after_each`, then workspace `after_each` (its `reset` first); when
  the run ends, target `after_all` (`"__target_after_all__"`) on every slot, then workspace
  `after_all` on every slot.

A target hook runs like a workspace hook (running/hooks.py: stdin JSON, `{{...}}` placeholders,
shell-safety, scrubbed environment plus the workspace's `env` and its own): in its `cwd`, else the
external workspace file's directory, else the eval file's; `hooks.enabled: false` turns the
workspace's hooks off, not the target's (AgentV). With no workspace, a target hook has nowhere to
run, as in AgentV: the runner warns. With `isolation: per_test` each test's workspace gets the
target's `before_all` / `after_all` too (AgentV runs them on a shared workspace only).
"""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from agentv_ci.model.suite import Test
from agentv_ci.model.workspace import TargetHooks, WorkspaceHook, WorkspaceSpec
from agentv_ci.prompting import render_input
from agentv_ci.security.confinement import real_path

if TYPE_CHECKING:
    # Imported where a hook runs: running a hook needs the shell-safety checks and the subprocess
    # helpers (~7 ms to import), which a run without workspace hooks never uses.
    from agentv_ci.running.hooks import HookContext, HookOutcome

BEFORE_ALL_ID = "__before_all__"
AFTER_ALL_ID = "__after_all__"
TARGET_BEFORE_ALL_ID = "__target_before_all__"
TARGET_AFTER_ALL_ID = "__target_after_all__"


class HookError(Exception):
    """A workspace could not be prepared for a test (a setup hook, a clone, a reset, preflight)."""

    def __init__(self, message: str, *, stage: str = "setup", reason: str = "script_error") -> None:
        super().__init__(message)
        self.stage = stage
        self.reason = reason


class HookRunner:
    """Runs the workspace's and the target's hooks of one run (`eval_run_id`)."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id

    def context(self, path: Path, test: Test | None, test_id: str | None = None) -> HookContext:
        # lazy: `running.hooks` loaded only when `context` runs
        from agentv_ci.running.hooks import HookContext

        return HookContext(
            workspace_path=path,
            test_id=test_id or (test.id if test else BEFORE_ALL_ID),
            eval_run_id=self.run_id,
            case_input=render_input(test.input, inline_files=False) if test else None,
            case_metadata=test.metadata if test else None,
        )

    async def workspace(
        self, name: str, spec: WorkspaceSpec, eval_dir: Path, context: HookContext
    ) -> HookOutcome:
        return await self._run(spec.hook(name), name, spec, eval_dir, context)

    async def target(
        self, name: str, hooks: TargetHooks | None, spec: WorkspaceSpec, eval_dir: Path, context: HookContext
    ) -> HookOutcome:
        # lazy: `running.hooks` loaded only when `target` runs
        from agentv_ci.running.hooks import HookOutcome

        outcome = await self._run(hooks.hook(name) if hooks else None, name, spec, eval_dir, context)
        return outcome if outcome.ok else HookOutcome(False, f"target {name}: {outcome.message}")

    @staticmethod
    async def _run(
        hook: WorkspaceHook | None, name: str, spec: WorkspaceSpec, eval_dir: Path, context: HookContext
    ) -> HookOutcome:
        # lazy: `running.hooks` loaded only when `_run` runs
        from agentv_ci.running.hooks import SETUP_TIMEOUT_MS, TEARDOWN_TIMEOUT_MS, HookOutcome, run_hook

        if hook is None or hook.command is None:
            return HookOutcome(True)
        default = SETUP_TIMEOUT_MS if name in ("before_all", "before_each") else TEARDOWN_TIMEOUT_MS
        cwd = _hook_cwd(hook, spec, eval_dir)
        if cwd is None:
            return HookOutcome(
                False, f"hook cwd {hook.cwd} now resolves to {real_path(str(hook.cwd))}: refused"
            )
        return await run_hook(
            hook.command,
            cwd=cwd,
            context=context,
            timeout_ms=hook.timeout_ms or default,
            env={**spec.env, **hook.env},
        )


def _hook_cwd(hook: WorkspaceHook, spec: WorkspaceSpec, eval_dir: Path) -> Path | None:
    """Where the hook runs; None when its `cwd` (a real path when it was loaded, inside the
    repository) has become a symlink to somewhere else since."""
    if hook.cwd is not None:
        return Path(hook.cwd) if real_path(hook.cwd) == Path(hook.cwd) else None
    return Path(spec.base_dir or eval_dir)


async def preflight(spec: WorkspaceSpec, path: Path) -> None:
    """AgentV's `env.required_commands` / `env.required_python_modules`; raises `HookError`."""
    missing = [f"command: {c}" for c in spec.required_commands if shutil.which(c) is None]
    for module in spec.required_python_modules:
        process = await asyncio.create_subprocess_exec(
            shutil.which("python3") or sys.executable,
            "-c",
            f"import {module}",
            cwd=str(path),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        if await process.wait() != 0:
            missing.append(f"python module: {module}")
    if missing:
        raise HookError("preflight checks failed, missing: " + ", ".join(missing), reason="preflight_error")
