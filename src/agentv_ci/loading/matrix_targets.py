"""`execution.targets` (the matrix): names, or AgentV's `{name, use_target, hooks}` entries.

An eval file's own entries (its `execution:` / `experiment:` block) carry `use_target` (the name
becomes an alias of that target when no targets file declares it) and `hooks` (`before_all`,
`before_each`, `after_each`, `after_all`, each `{command, cwd, timeout_ms, env}` as a workspace
hook), run as AgentV v4.42.4 runs them (running/lifecycle.py). A test's own entries are names
only to AgentV, which drops their `hooks` / `use_target`: so they are reported (W110) and ignored.
"""

from __future__ import annotations

from typing import Any

from agentv_ci.loading.context import LoadContext, Node, type_name
from agentv_ci.loading.keys import WORKSPACE_HOOKS
from agentv_ci.loading.workspace import parse_hook
from agentv_ci.model.bounds import MAX_TARGETS
from agentv_ci.model.suite import ExecutionSpec
from agentv_ci.model.workspace import TargetHooks, WorkspaceHook

MATRIX_TARGET_KEYS = frozenset({"name", "use_target", "hooks"})


def parse_targets(
    raw: Any, node: Node, ctx: LoadContext, *, suite_level: bool
) -> tuple[list[str] | None, dict[str, TargetHooks]]:
    """The target names of a matrix, and the hooks / aliases of the entries that have them."""
    if isinstance(raw, str):
        return [raw], {}
    if not isinstance(raw, list):
        ctx.error("E101", f"targets must be a list, got {type_name(raw)}", node)
        return None, {}
    if len(raw) > MAX_TARGETS:
        ctx.error(
            "E115",
            f"a test runs against at most {MAX_TARGETS} targets (the bound on the matrix), got {len(raw)}",
            node.child(MAX_TARGETS),
            hint="split the matrix across eval files or runs (`--target`)",
        )
        return None, {}
    names: list[str] = []
    extras: dict[str, TargetHooks] = {}
    for i, item in enumerate(raw):
        where = node.child(i)
        if isinstance(item, str):
            names.append(item)
        elif isinstance(item, dict):
            ctx.check_keys(item, where, MATRIX_TARGET_KEYS, "a matrix target")
            name = item.get("name")
            if not isinstance(name, str) or not name:
                ctx.error("E102", "a matrix target needs a `name`", where)
                continue
            names.append(name)
            if not suite_level:
                _not_run_per_test(item, where, ctx)
                continue
            entry = _entry(item, where, ctx)
            if entry is not None and name not in extras:  # the first entry of a name counts
                extras[name] = entry
        else:
            ctx.error("E101", "a target must be a name or a mapping with `name`", where)
    return names, extras


def _not_run_per_test(item: dict[str, Any], where: Node, ctx: LoadContext) -> None:
    for key in ("hooks", "use_target"):
        if key in item:
            ctx.warn(
                "W110",
                f"a test's matrix target `{key}` is not run (AgentV reads a test's targets as names "
                "only); it is ignored",
                where.child(key),
                key=True,
                hint="put the entry in the eval file's `execution.targets` (or `experiment.targets`)",
            )


def _entry(item: dict[str, Any], where: Node, ctx: LoadContext) -> TargetHooks | None:
    use_target: str | None = None
    if "use_target" in item:
        value = item["use_target"]
        if isinstance(value, str):  # empty (an unset `${{ VAR }}`): no alias, as AgentV
            use_target = value.strip() or None
        else:
            ctx.error("E101", "use_target must be the name of a target", where.child("use_target"))
    hooks: dict[str, WorkspaceHook] = {}
    if "hooks" in item:
        hooks = _hooks(item["hooks"], where.child("hooks"), ctx)
    if use_target is None and not hooks:
        return None
    return TargetHooks(
        hooks=hooks,
        use_target=use_target,
        use_target_location=where.child("use_target").loc() if use_target else None,
    )


def _hooks(raw: Any, node: Node, ctx: LoadContext) -> dict[str, WorkspaceHook]:
    if not isinstance(raw, dict):
        ctx.error("E101", f"a matrix target's hooks must be a mapping, got {type_name(raw)}", node)
        return {}
    ctx.check_keys(raw, node, WORKSPACE_HOOKS, "a matrix target's hooks")
    hooks: dict[str, WorkspaceHook] = {}
    for name in WORKSPACE_HOOKS:
        if name not in raw:
            continue
        fields = parse_hook(raw[name], node.child(name), ctx, node.base_dir, what="a target hook")
        if fields is None:
            continue
        if "reset" in fields:
            ctx.warn(
                "W110",
                "a target hook's `reset` is not run (AgentV ignores it too); it is ignored",
                node.child(name).child("reset"),
                key=True,
                hint="put the reset on the workspace's hook (`workspace.hooks`)",
            )
            del fields["reset"]
        if "command" in fields:
            hooks[name] = WorkspaceHook(**fields)
    return hooks


def warn_hooks_without_workspace(execution: ExecutionSpec, ctx: LoadContext) -> None:
    """W106 when the eval file's matrix targets have hooks but none of its tests has a workspace:
    a target hook runs in the test's workspace (AgentV), so these never run."""
    named = [name for name, entry in (execution.target_hooks or {}).items() if entry.hooks]
    if named and execution.target_location is not None:
        loc = execution.target_location
        ctx.report(
            "W106",
            f"the hooks of matrix target(s) {', '.join(map(repr, named))} never run: they run in the "
            "test's workspace, and no test of this file has one",
            loc,
            "add a `workspace:` (a `template:` directory is enough), or move the setup into the target",
        )
