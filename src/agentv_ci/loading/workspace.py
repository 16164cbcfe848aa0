"""`workspace:` blocks (inline or an external YAML file): parsed and validated now, executed later."""

from __future__ import annotations

from typing import Any

from agentv_ci.loading.context import LoadContext, Node, type_name
from agentv_ci.loading.documents import read_document
from agentv_ci.loading.grader_checks import depend_on_command_files
from agentv_ci.loading.keys import WORKSPACE_HOOK_KEYS, WORKSPACE_HOOKS, WORKSPACE_KEYS, WORKSPACE_REPO_KEYS
from agentv_ci.loading.paths import resolve_reference

ISOLATION = ("shared", "per_test")
MODES = ("pooled", "temp", "static")
RESETS = ("none", "fast", "strict")


def _hook(raw: Any, node: Node, ctx: LoadContext) -> dict[str, Any] | None:
    if isinstance(raw, str | list):
        raw = {"command": raw}
    if not isinstance(raw, dict):
        ctx.error("E101", f"a hook must be a mapping, got {type_name(raw)}", node)
        return None
    ctx.check_keys(raw, node, WORKSPACE_HOOK_KEYS - {"script"}, "a workspace hook", {"script": "`command`"})
    hook = dict(raw)
    if "script" in hook and "command" not in hook:
        hook["command"] = hook.pop("script")
    if "command" not in hook:
        ctx.error("E102", "workspace hook needs a `command`", node)
    elif not isinstance(hook["command"], str | list):
        ctx.error("E101", "hook command must be a string or a list of strings", node.child("command"))
    else:
        missing = depend_on_command_files(hook["command"], node, ctx, hook.get("cwd"))
        # before_all / after_all run in the eval file's directory, so their scripts must exist now
        # (per-test hooks run inside the workspace copy, which may provide them).
        if node.path and node.path[-1] in ("before_all", "after_all"):
            key = "command" if "command" in raw else "script"
            for index, arg in missing:
                where = node.child(key) if index is None else node.child(key).child(index)
                ctx.error(
                    "E301",
                    f"hook script not found: {arg}",
                    where,
                    hint=f"resolved relative to {node.base_dir}",
                )
    if "timeout_ms" in hook and not (isinstance(hook["timeout_ms"], int) and hook["timeout_ms"] > 0):
        ctx.error("E110", "timeout_ms must be a positive integer", node.child("timeout_ms"))
    if "reset" in hook and hook["reset"] not in RESETS:
        ctx.error("E103", f"reset must be one of {', '.join(RESETS)}", node.child("reset"))
    return hook


def parse_workspace(raw: Any, node: Node, ctx: LoadContext) -> dict[str, Any] | None:
    """Normalise a workspace; a string is a path to an external workspace YAML file."""
    if raw is None:
        return None
    if isinstance(raw, str):
        path = resolve_reference(raw, node.base_dir, ctx.repo_root)
        doc = read_document(path, ctx, node.loc())
        if doc is None:
            return None
        if not isinstance(doc.data, dict):
            ctx.error("E101", "an external workspace file must contain a mapping", Node(doc))
            return None
        workspace = parse_workspace(doc.data, Node(doc), ctx)
        if workspace is not None:
            workspace.setdefault("source_file", str(path))
        return workspace
    if not isinstance(raw, dict):
        ctx.error("E101", f"workspace must be a mapping or a path, got {type_name(raw)}", node)
        return None
    ctx.check_keys(raw, node, WORKSPACE_KEYS, "workspace")
    workspace = dict(raw)
    if "template" in raw:
        if not isinstance(raw["template"], str):
            ctx.error("E101", "workspace template must be a path", node.child("template"))
        else:
            template = resolve_reference(raw["template"], node.base_dir, ctx.repo_root)
            ctx.depend(template)
            inside = ctx.confined(template, node.child("template"), raw["template"])  # else E305
            if inside and not template.is_dir():
                ctx.error(
                    "E301",
                    f"workspace template directory not found: {raw['template']}",
                    node.child("template"),
                )
            workspace["template"] = str(template)
    repos = raw.get("repos")
    if repos is not None:
        if not isinstance(repos, list):
            ctx.error("E101", f"workspace repos must be a list, got {type_name(repos)}", node.child("repos"))
        else:
            for i, repo in enumerate(repos):
                child = node.child("repos").child(i)
                if not isinstance(repo, dict):
                    ctx.error("E101", "a workspace repo must be a mapping", child)
                    continue
                ctx.check_keys(repo, child, WORKSPACE_REPO_KEYS, "a workspace repo")
                if "path" not in repo:
                    ctx.error("E102", "workspace repo needs a `path`", child)
                if "repo" not in repo and "source" not in repo:
                    ctx.error("E102", "workspace repo needs a `repo` (URL or org/name)", child)
                if "ancestor" in repo and not (isinstance(repo["ancestor"], int) and repo["ancestor"] >= 0):
                    ctx.error("E110", "ancestor must be a non-negative integer", child.child("ancestor"))
    hooks = raw.get("hooks")
    if hooks is not None:
        if not isinstance(hooks, dict):
            ctx.error("E101", "workspace hooks must be a mapping", node.child("hooks"))
        else:
            ctx.check_keys(hooks, node.child("hooks"), (*WORKSPACE_HOOKS, "enabled"), "workspace hooks")
            parsed = dict(hooks)
            for name in WORKSPACE_HOOKS:
                if name in hooks:
                    hook = _hook(hooks[name], node.child("hooks").child(name), ctx)
                    if hook is not None:
                        parsed[name] = hook
            workspace["hooks"] = parsed
    hooks_raw = raw.get("hooks")
    after_each = hooks_raw.get("after_each") if isinstance(hooks_raw, dict) else None
    resets = isinstance(after_each, dict) and after_each.get("reset") not in (None, "none")
    if resets and raw.get("isolation") == "per_test":
        ctx.warn(
            "W106",
            "hooks.after_each.reset is redundant with `isolation: per_test`",
            node.child("hooks").child("after_each").child("reset"),
            hint="each test already gets a fresh workspace copy",
        )
    if "isolation" in raw and raw["isolation"] not in ISOLATION:
        ctx.error("E103", f"isolation must be one of {', '.join(ISOLATION)}", node.child("isolation"))
    if "mode" in raw and raw["mode"] not in MODES:
        ctx.error("E103", f"workspace mode must be one of {', '.join(MODES)}", node.child("mode"))
    if "env" in raw and not isinstance(raw["env"], dict):
        ctx.error("E101", "workspace env must be a mapping", node.child("env"))
    return workspace


def merge_workspace(suite: dict[str, Any] | None, test: dict[str, Any] | None) -> dict[str, Any] | None:
    """Test fields replace suite fields; `env` is deep-merged."""
    if suite is None or test is None:
        return test if test is not None else suite
    merged = {**suite, **test}
    if isinstance(suite.get("env"), dict) and isinstance(test.get("env"), dict):
        merged["env"] = {**suite["env"], **test["env"]}
    return merged
