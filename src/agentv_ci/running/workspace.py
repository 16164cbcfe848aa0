"""Workspaces as AgentV v4.42.4 runs them (`workspace/setup.ts`, `orchestrator.ts`).

A workspace is materialised as: the `template` copied (without `.git`), each of `repos` cloned and
checked out (running/repos.py), the `env` preflight (`required_commands`, `required_python_modules`),
then `before_all` with `test_id: "__before_all__"` and the workspace's path.

- `isolation: shared` (default): the tests of a suite (per eval target) share it. `mode: pooled`
  (the default when there are repos) keeps up to `workers` copies ("slots"), each prepared the same
  way and given to one test at a time; `mode: temp` (and a template-only workspace) keeps one, which
  the suite's tests take in turn; `mode: static` uses `path` (materialised when empty or missing,
  else reused; never deleted). Slots live for the run; the repositories' mirrors are kept between
  runs (the AgentV pool keeps whole slots: a deliberate difference, see docs/eval-format.md).
- `isolation: per_test`: every test gets a fresh one, with its own `before_all` (the test's id and
  input) and `after_all`, deleted after the test unless workspaces are kept.

Around each test: `before_each` (its `reset` first, then its command), the test, `after_each` (its
`reset`, then its command). A reset puts every repo this run cloned back at its commit (`fast`:
`git clean -fd`, `strict`: `-fdx`) and everything else (the root, a static workspace's repos that
were there already) back to its snapshot (snapshots.py: never a commit, never deleting a file the
run did not create). A static workspace inside a git work tree is not reset unless the workspace says
`allow_reset_of_worktree: true`. Hooks run in their `cwd` (confined by the loader; refused here if it
became a symlink since), else the external workspace file's directory, else the eval file's. A
failing setup step makes the test an execution error (stage `setup`/`repo_setup`); a failing
teardown step only warns. `after_all` runs on every slot when the run ends.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from agentv_ci.model.suite import Suite, Test
from agentv_ci.model.workspace import TargetHooks, WorkspaceSpec
from agentv_ci.running.lifecycle import (
    AFTER_ALL_ID,
    BEFORE_ALL_ID,
    TARGET_AFTER_ALL_ID,
    TARGET_BEFORE_ALL_ID,
    HookError,
    HookRunner,
    preflight,
)
from agentv_ci.running.repos import RepoCache, RepoError
from agentv_ci.running.snapshots import Snapshot, take_snapshot
from agentv_ci.security.worktrees import work_tree_touched_by

__all__ = ["AFTER_ALL_ID", "BEFORE_ALL_ID", "HookError", "Lease", "Slot", "WorkspaceManager", "workspace_of"]


def workspace_of(test: Test, suite: Suite) -> WorkspaceSpec | None:
    return test.workspace if test.workspace is not None else suite.workspace


@dataclass
class Slot:
    """One materialised workspace directory."""

    path: Path
    spec: WorkspaceSpec
    eval_dir: Path
    owned: bool = True  # False for `mode: static`: never deleted
    target_hooks: TargetHooks | None = None  # the matrix target's hooks (running/lifecycle.py)
    cloned: set[str] = field(default_factory=set)  # repo paths this run cloned (reset to their commit)
    snapshots: list[Snapshot] = field(default_factory=list)  # the rest, for resets

    def discard(self, *, delete: bool) -> None:
        for snapshot in self.snapshots:
            snapshot.discard()
        self.snapshots.clear()
        if delete and self.owned:
            shutil.rmtree(self.path, ignore_errors=True)


@dataclass
class _Group:
    """The shared workspace of one suite x target x workspace definition."""

    max_slots: int
    condition: asyncio.Condition = field(default_factory=asyncio.Condition)
    slots: list[Slot] = field(default_factory=list)
    free: list[Slot] = field(default_factory=list)
    building: int = 0
    failure: HookError | None = None


@dataclass
class Lease:
    """A workspace lent to one test."""

    slot: Slot
    group: _Group | None  # None: a per-test workspace


class WorkspaceManager:
    """Prepares and lends workspaces; `close()` runs `after_all` and deletes what the run made."""

    def __init__(
        self,
        run_id: str,
        warnings: list[str],
        *,
        workers: int = 1,
        keep: bool = False,
        repos: RepoCache | None = None,
        protected: tuple[Path, ...] = (),
    ) -> None:
        self.run_id = run_id
        self.warnings = warnings
        self.workers = max(1, workers)
        self.keep = keep
        self.protected = protected  # what the run writes (output, cache): a reset never touches it
        self.repos = repos or RepoCache()
        self._groups: dict[tuple[str, str, bytes, bytes], _Group] = {}
        self.hooks = HookRunner(run_id)

    # ------------------------------------------------------------------ materialising
    async def _materialise(
        self, spec: WorkspaceSpec, eval_dir: Path, test: Test | None, targets: TargetHooks | None
    ) -> Slot:
        """A prepared workspace: template, repos, preflight, before_all (the workspace's, then the
        target's), baseline. Raises HookError."""
        static = spec.mode == "static" and spec.path is not None
        if static:
            assert spec.path is not None
            path = Path(spec.path)
            tree = work_tree_touched_by(path, eval_dir) if spec.resets else None
            if tree is not None and not spec.allow_reset_of_worktree:
                raise HookError(
                    f"refusing to reset the static workspace {path}: it would rewrite the git work tree "
                    f"{tree} (set `allow_reset_of_worktree: true` in the workspace to allow it)",
                    reason="reset_refused",
                )
            fresh = not path.is_dir() or not any(path.iterdir())
            path.mkdir(parents=True, exist_ok=True)
        else:
            path, fresh = Path(tempfile.mkdtemp(prefix="agentv-ci-ws-")), True
        slot = Slot(path=path, spec=spec, eval_dir=eval_dir, owned=not static, target_hooks=targets)
        try:
            if spec.template and fresh:
                try:
                    await asyncio.to_thread(
                        shutil.copytree,
                        spec.template,
                        path,
                        dirs_exist_ok=True,
                        symlinks=True,
                        ignore=shutil.ignore_patterns(".git"),
                    )
                except OSError as exc:
                    raise HookError(
                        f"cannot copy workspace template {spec.template}: {exc}", reason="template_error"
                    ) from None
            for repo in spec.repos:
                if static and (path / repo.path).exists():
                    continue  # a static workspace keeps the repos it has (a reset restores their snapshot)
                slot.cloned.add(repo.path)
                try:
                    await self.repos.materialize(repo, path)
                except RepoError as exc:
                    raise HookError(
                        f"cannot materialise repo {repo.path}: {exc}",
                        stage="repo_setup",
                        reason="clone_error",
                    ) from None
            await preflight(spec, path)
            context = self.hooks.context(path, test, None if test else BEFORE_ALL_ID)
            outcome = await self.hooks.workspace("before_all", spec, eval_dir, context)
            if not outcome.ok:
                raise HookError(f"before_all: {outcome.message}")
            context = self.hooks.context(path, test, None if test else TARGET_BEFORE_ALL_ID)
            outcome = await self.hooks.target("before_all", targets, spec, eval_dir, context)
            if not outcome.ok:
                raise HookError(outcome.message)
            if spec.resets:
                await self._snapshot(slot)
        except BaseException:
            slot.discard(delete=True)
            raise
        return slot

    async def _snapshot(self, slot: Slot) -> None:
        """Snapshots for resets: the root (without the repos) and each repo this run did not clone."""
        repos = [r.path for r in slot.spec.repos]
        places = [(slot.path, repos)] + [(slot.path / p, []) for p in repos if p not in slot.cloned]
        for directory, exclude in places:
            try:
                slot.snapshots.append(
                    await take_snapshot(directory, exclude=exclude, protected=self.protected)
                )
            except RepoError as exc:
                self.warnings.append(f"{directory}: no snapshot for resets ({exc}); it is not reset")

    async def _reset(self, slot: Slot, spec: WorkspaceSpec, mode: str | None) -> None:
        if mode in (None, "none"):
            return
        assert mode is not None
        for repo in spec.repos:
            if repo.path in slot.cloned:
                await self.repos.reset(repo, slot.path, mode)
        for snapshot in slot.snapshots:
            await snapshot.restore(mode)

    # ------------------------------------------------------------------ shared slots
    def _group(self, suite: Suite, target: str, spec: WorkspaceSpec, targets: TargetHooks | None) -> _Group:
        once = ("before_all", "after_all")
        setup = msgspec.structs.replace(spec, hooks={k: v for k, v in spec.hooks.items() if k in once})
        own = {k: v for k, v in targets.hooks.items() if k in once} if targets else {}
        key = (suite.path, target, msgspec.json.encode(setup), msgspec.json.encode(own))
        group = self._groups.get(key)
        if group is None:
            pooled = spec.mode == "pooled" or (spec.mode is None and bool(spec.repos))
            group = self._groups[key] = _Group(max_slots=self.workers if pooled else 1)
        return group

    async def _acquire(
        self, group: _Group, spec: WorkspaceSpec, eval_dir: Path, targets: TargetHooks | None
    ) -> Slot:
        async with group.condition:
            while True:
                if group.failure is not None:
                    raise group.failure
                if group.free:
                    return group.free.pop()
                if len(group.slots) + group.building < group.max_slots:
                    group.building += 1
                    break
                await group.condition.wait()
        try:
            slot = await self._materialise(spec, eval_dir, None, targets)
        except HookError as exc:
            async with group.condition:
                group.building -= 1
                group.failure = exc  # as AgentV: the suite's setup failed, every test of it errors
                group.condition.notify_all()
            raise
        except BaseException:
            async with group.condition:
                group.building -= 1
                group.condition.notify_all()
            raise
        async with group.condition:
            group.building -= 1
            group.slots.append(slot)
        return slot

    async def _release(self, group: _Group, slot: Slot) -> None:
        async with group.condition:
            group.free.append(slot)
            group.condition.notify()

    # ------------------------------------------------------------------ per test
    async def enter(
        self, suite: Suite, test: Test, target: str = "", targets: TargetHooks | None = None
    ) -> Lease | None:
        """The test's workspace, prepared and `before_each` run (the workspace's, then the target's
        `targets` hooks); raises `HookError` when setup fails."""
        spec = workspace_of(test, suite)
        if spec is None:
            return None
        eval_dir = Path(suite.path).parent
        if spec.isolation == "per_test":
            lease = Lease(await self._materialise(spec, eval_dir, test, targets), None)
        else:
            group = self._group(suite, target, spec, targets)
            lease = Lease(await self._acquire(group, spec, eval_dir, targets), group)
        try:
            hook = spec.hook("before_each")
            try:
                await self._reset(lease.slot, spec, hook.reset if hook else None)
            except RepoError as exc:
                raise HookError(f"before_each reset failed: {exc}") from None
            context = self.hooks.context(lease.slot.path, test)
            outcome = await self.hooks.workspace("before_each", spec, eval_dir, context)
            if not outcome.ok:
                raise HookError(f"before_each: {outcome.message}")
            outcome = await self.hooks.target("before_each", targets, spec, eval_dir, context)
            if not outcome.ok:
                raise HookError(outcome.message)
        except BaseException:
            await self._give_back(lease, test, spec)
            raise
        return lease

    async def leave(self, suite: Suite, test: Test, lease: Lease | None) -> None:
        """Teardown after a test: the target's `after_each`, then the workspace's `after_each` reset
        and command (warnings only)."""
        if lease is None:
            return
        spec = workspace_of(test, suite) or lease.slot.spec
        context = self.hooks.context(lease.slot.path, test)
        outcome = await self.hooks.target(
            "after_each", lease.slot.target_hooks, spec, lease.slot.eval_dir, context
        )
        if not outcome.ok:
            self.warnings.append(f"{test.id}: {outcome.message}")
        hook = spec.hook("after_each")
        try:
            await self._reset(lease.slot, spec, hook.reset if hook else None)
        except RepoError as exc:
            self.warnings.append(f"{test.id}: after_each reset failed: {exc}")
        outcome = await self.hooks.workspace("after_each", spec, lease.slot.eval_dir, context)
        if not outcome.ok:
            self.warnings.append(f"{test.id}: after_each: {outcome.message}")
        await self._give_back(lease, test, spec)

    async def _give_back(self, lease: Lease, test: Test, spec: WorkspaceSpec) -> None:
        if lease.group is not None:
            await self._release(lease.group, lease.slot)
            return
        slot = lease.slot
        context = self.hooks.context(slot.path, test, TARGET_AFTER_ALL_ID)
        outcome = await self.hooks.target("after_all", slot.target_hooks, spec, slot.eval_dir, context)
        if not outcome.ok:
            self.warnings.append(f"{test.id}: {outcome.message}")
        context = self.hooks.context(slot.path, test, AFTER_ALL_ID)
        outcome = await self.hooks.workspace("after_all", spec, slot.eval_dir, context)
        if not outcome.ok:
            self.warnings.append(f"{test.id}: after_all: {outcome.message}")
        slot.discard(delete=not self.keep)

    async def close(self) -> None:
        """`after_all` on every shared slot (the target's on each slot of a group, then the
        workspace's), then delete the slots the run made (unless kept)."""
        for group in self._groups.values():
            for slot in group.slots:
                context = self.hooks.context(slot.path, None, TARGET_AFTER_ALL_ID)
                outcome = await self.hooks.target(
                    "after_all", slot.target_hooks, slot.spec, slot.eval_dir, context
                )
                if not outcome.ok:
                    self.warnings.append(f"{slot.path}: {outcome.message}")
            for slot in group.slots:
                context = self.hooks.context(slot.path, None, AFTER_ALL_ID)
                outcome = await self.hooks.workspace("after_all", slot.spec, slot.eval_dir, context)
                if not outcome.ok:
                    self.warnings.append(f"{slot.path}: after_all: {outcome.message}")
                slot.discard(delete=not self.keep)
        self._groups.clear()
        self.warnings.extend(self.repos.warnings)
        self.repos.warnings.clear()
