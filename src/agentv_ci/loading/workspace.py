"""`workspace:` blocks (inline or an external YAML file) -> `WorkspaceSpec` (AgentV v4.42.4's model).

Parsing yields the fields as written (paths resolved against the file they are written in: an
external workspace file resolves its own template, hook `cwd` and local repos); `merge_workspace`
lays a test's fields over its suite's, as AgentV: fields replace fields, each hook merges field by
field, `hooks.enabled` is the test's if set. What agentv-ci does not run is reported here, located:
the v5 keys `setup`/`scope`-less leftovers (W110).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agentv_ci.loading.context import LoadContext, Node, type_name
from agentv_ci.loading.docker_workspace import parse_docker, parse_image_repo, writes_docker
from agentv_ci.loading.documents import read_document
from agentv_ci.loading.hook_commands import check_hook_command
from agentv_ci.loading.keys import WORKSPACE_HOOK_KEYS, WORKSPACE_HOOKS, WORKSPACE_KEYS, WORKSPACE_REPO_KEYS
from agentv_ci.loading.paths import resolve_reference, safe_resolve
from agentv_ci.model.bounds import MAX_WAIT_MS
from agentv_ci.model.workspace import (
    ImageRepo,
    WorkspaceHook,
    WorkspaceIsolation,
    WorkspaceMode,
    WorkspaceRepo,
    WorkspaceReset,
    WorkspaceSpec,
)

ISOLATION: tuple[WorkspaceIsolation, ...] = ("shared", "per_test")
# AgentV v5's spelling of `isolation`
SCOPES: dict[str, WorkspaceIsolation] = {"suite": "shared", "attempt": "per_test"}
MODES: tuple[WorkspaceMode, ...] = ("pooled", "temp", "static")
RESETS: tuple[WorkspaceReset, ...] = ("none", "fast", "strict")
REMOVED_KEYS = {  # AgentV 4.x refuses these (yaml-parser.ts), so do we
    "static_path": "use `path` with `mode: static`",
    "pool": "use `mode: pooled` or `mode: temp`",
    "static": "use `mode: static`",
}
_GITHUB_SHORTHAND = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")

Partial = dict[str, Any]  # the fields a workspace block wrote, typed and resolved


def _command(raw: Any, node: Node, ctx: LoadContext) -> list[str] | str | None:
    if isinstance(raw, str) and raw.strip():
        return raw
    if isinstance(raw, list) and raw and all(isinstance(a, str) for a in raw):
        return list(raw)
    ctx.error("E101", "hook command must be a non-empty string or list of strings", node)
    return None


def parse_hook(
    raw: Any, node: Node, ctx: LoadContext, base_dir: Path, what: str = "a workspace hook"
) -> dict[str, Any] | None:
    """The fields of one hook as written (`cwd` absolute); None when it is unusable. Also reads a
    matrix target's hooks (loading/execution.py), which `what` names."""
    if isinstance(raw, str | list):
        raw = {"command": raw}  # shorthand (agentv-ci): the command alone
    if not isinstance(raw, dict):
        ctx.error("E101", f"a hook must be a mapping, got {type_name(raw)}", node)
        return None
    ctx.check_keys(raw, node, WORKSPACE_HOOK_KEYS - {"script"}, what, {"script": "`command`"})
    hook: dict[str, Any] = {}
    key = "command" if "command" in raw else "script"
    if key in raw:
        command = _command(raw[key], node.child(key), ctx)
        if command is not None:
            hook["command"] = command
    if "reset" in raw:
        if raw["reset"] in RESETS:
            hook["reset"] = raw["reset"]
        else:
            ctx.error("E103", f"reset must be one of {', '.join(RESETS)}", node.child("reset"))
    if "command" not in hook and "reset" not in hook and key not in raw and "reset" not in raw:
        ctx.error("E102", f"{what} needs a `command` or a `reset`", node)
    if "cwd" in raw:
        if isinstance(raw["cwd"], str) and raw["cwd"]:
            cwd = safe_resolve(base_dir / raw["cwd"])
            # Confined like every other path (E305): a hook must not start in /etc or in $HOME.
            if ctx.confined(cwd, node.child("cwd"), raw["cwd"]):
                hook["cwd"] = str(cwd)
                if not cwd.is_dir():
                    ctx.warn("W106", f"hook cwd {raw['cwd']!r} is not a directory (yet)", node.child("cwd"))
        else:
            ctx.error("E101", "hook cwd must be a path", node.child("cwd"))
    if "timeout_ms" in raw:
        if (
            isinstance(raw["timeout_ms"], int)
            and not isinstance(raw["timeout_ms"], bool)
            and 0 < raw["timeout_ms"] <= MAX_WAIT_MS
        ):
            hook["timeout_ms"] = raw["timeout_ms"]
        else:
            ctx.error(
                "E110",
                f"timeout_ms must be a whole number of milliseconds from 1 to {MAX_WAIT_MS:.0f}",
                node.child("timeout_ms"),
            )
    if "env" in raw:
        env = _string_map(raw["env"], node.child("env"), ctx)
        if env is not None:
            hook["env"] = env
    if "command" in hook:
        # Here, not at the top: the script and import scanners (~2 ms) only for files with hooks.
        from agentv_ci.loading.script_checks import check_script_argument

        cwd = Path(hook["cwd"]) if "cwd" in hook else base_dir
        check_script_argument(hook["command"], node.child(key), ctx, cwd, what="hook script")
        check_hook_command(hook["command"], node.child(key), ctx)
    return hook


def _string_map(raw: Any, node: Node, ctx: LoadContext) -> dict[str, str] | None:
    if not isinstance(raw, dict):
        ctx.error("E101", f"env must be a mapping, got {type_name(raw)}", node)
        return None
    return {str(k): "" if v is None else str(v) for k, v in raw.items()}


def _repo_source(text: str, node: Node, ctx: LoadContext, base_dir: Path) -> str | None:
    """The clone URL of `repo:`; local sources (`file://`, paths) must be inside the repository."""
    if text.startswith("-") or "\0" in text:
        ctx.error("E103", f"repo {text!r} is not a repository URL", node)
        return None
    if _GITHUB_SHORTHAND.match(text) and not (base_dir / text).exists():
        return f"https://github.com/{text}.git"
    if text.startswith("ext::") or text.startswith("fd::"):
        ctx.error("E103", f"repo {text!r}: git's `ext::`/`fd::` transports are refused", node)
        return None
    if "://" in text and not text.startswith("file://"):
        return text  # https://, ssh://, git://
    if re.match(r"^[\w.-]+@[\w.-]+:", text):
        return text  # scp-like ssh (git@host:org/repo)
    local = safe_resolve(base_dir / text.removeprefix("file://")) if not text.startswith("file:///") else None
    if local is None:
        local = safe_resolve(Path(text.removeprefix("file://")))
    if not ctx.confined(local, node, text):
        return None
    if not local.exists():
        ctx.error("E301", f"repository not found: {text}", node, hint=f"resolved to {local}")
        return None
    return local.as_uri()


def _repos(
    raw: Any, node: Node, ctx: LoadContext, base_dir: Path, image_repos: list[ImageRepo] | None
) -> list[WorkspaceRepo] | None:
    """The repositories to clone; with `docker` in the block (`image_repos` a list), the entries
    without `repo` are repositories inside the image, collected there (AgentV v4.42.4)."""
    if not isinstance(raw, list):
        ctx.error("E101", f"workspace repos must be a list, got {type_name(raw)}", node)
        return None
    repos: list[WorkspaceRepo] = []
    for i, item in enumerate(raw):
        child = node.child(i)
        if not isinstance(item, dict):
            ctx.error("E101", "a workspace repo must be a mapping", child)
            continue
        ctx.check_keys(item, child, WORKSPACE_REPO_KEYS, "a workspace repo")
        path, repo = item.get("path"), item.get("repo")
        if repo is None and image_repos is not None:
            image_repo = parse_image_repo(item, child, ctx)
            if image_repo is not None:
                image_repos.append(image_repo)
            continue
        if not isinstance(path, str) or not path.strip():
            ctx.error("E102", "workspace repo needs a `path` (where it is cloned in the workspace)", child)
            continue
        if Path(path).is_absolute() or ".." in Path(path).parts:
            ctx.error("E103", f"repo path {path!r} must stay inside the workspace", child.child("path"))
            continue
        if not isinstance(repo, str) or not repo.strip():
            ctx.error(
                "E102",
                "workspace repo needs a `repo` (URL or org/name)",
                child,
                hint="an entry without `repo` (a repository in the image) needs `docker` in its workspace",
            )
            continue
        url = _repo_source(repo.strip(), child.child("repo"), ctx, base_dir)
        commit, base = item.get("commit"), item.get("base_commit")
        for key, value in (("commit", commit), ("base_commit", base)):
            if value is not None and (not isinstance(value, str) or not value or value.startswith("-")):
                ctx.error("E103", f"{key} must be a branch, tag or commit SHA", child.child(key))
        if isinstance(commit, str) and isinstance(base, str) and commit != base:
            ctx.error(
                "E113",
                "`commit` and `base_commit` differ (`base_commit` is an alias)",
                child.child("base_commit"),
            )
        ancestor = item.get("ancestor", 0)
        if not isinstance(ancestor, int) or isinstance(ancestor, bool) or ancestor < 0:
            ctx.error("E110", "ancestor must be a non-negative integer", child.child("ancestor"))
            ancestor = 0
        sparse = item.get("sparse", [])
        if not isinstance(sparse, list) or not all(isinstance(s, str) and s and s[0] != "-" for s in sparse):
            ctx.error("E101", "sparse must be a list of paths", child.child("sparse"))
            sparse = []
        if url is not None:
            ref = commit if isinstance(commit, str) else base if isinstance(base, str) else None
            repos.append(WorkspaceRepo(path=path, repo=url, commit=ref, ancestor=ancestor, sparse=sparse))
    return repos


def _hooks(raw: Any, node: Node, ctx: LoadContext, base_dir: Path) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        ctx.error("E101", "workspace hooks must be a mapping", node)
        return None
    ctx.check_keys(raw, node, (*WORKSPACE_HOOKS, "enabled"), "workspace hooks")
    hooks: dict[str, Any] = {}
    if "enabled" in raw and ctx.expect_type(
        raw["enabled"], (bool,), "enabled", node.child("enabled"), "true or false"
    ):
        hooks["enabled"] = raw["enabled"]
    for name in WORKSPACE_HOOKS:
        if name in raw:
            hook = parse_hook(raw[name], node.child(name), ctx, base_dir)
            if hook is not None:
                hooks[name] = hook
    return hooks


def _env(raw: Any, node: Node, ctx: LoadContext, partial: Partial) -> None:
    """AgentV's preflight lists (`required_commands`, `required_python_modules`); any other entry is a
    variable for the hooks (agentv-ci)."""
    if not isinstance(raw, dict):
        ctx.error("E101", "workspace env must be a mapping", node)
        return
    variables: dict[str, str] = {}
    for key, value in raw.items():
        if key in ("required_commands", "required_python_modules"):
            if isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value):
                partial[key] = [v.strip() for v in value]
            else:
                ctx.error("E101", f"{key} must be a list of names", node.child(key))
        else:
            variables[str(key)] = "" if value is None else str(value)
    if variables:
        partial["env"] = variables


def parse_workspace(raw: Any, node: Node, ctx: LoadContext) -> Partial | None:
    """The fields a workspace block wrote; a string is a path to an external workspace YAML file."""
    if raw is None:
        return None
    if isinstance(raw, str):
        return _external_workspace(raw, node, ctx)
    if not isinstance(raw, dict):
        ctx.error("E101", f"workspace must be a mapping or a path, got {type_name(raw)}", node)
        return None
    ctx.check_keys(raw, node, WORKSPACE_KEYS | REMOVED_KEYS.keys(), "workspace")
    for key, hint in REMOVED_KEYS.items():
        if key in raw:
            ctx.error(
                "E114", f"workspace.{key} was removed from AgentV", node.child(key), key=True, hint=hint
            )
    base_dir = node.base_dir
    partial: Partial = {}
    if "template" in raw:
        _template(raw["template"], node.child("template"), ctx, partial)
    if "repos" in raw:
        image_repos: list[ImageRepo] | None = [] if writes_docker(raw) else None
        repos = _repos(raw["repos"], node.child("repos"), ctx, base_dir, image_repos)
        if repos is not None:
            partial["repos"] = repos
            partial["image_repos"] = image_repos or []
    if "hooks" in raw:
        hooks = _hooks(raw["hooks"], node.child("hooks"), ctx, base_dir)
        if hooks is not None:
            partial["hooks"] = hooks
    _isolation_and_mode(raw, node, ctx, partial)
    _check_static_path(node, ctx, partial)
    if "env" in raw:
        _env(raw["env"], node.child("env"), ctx, partial)
    if "allow_reset_of_worktree" in raw and ctx.expect_type(
        raw["allow_reset_of_worktree"],
        (bool,),
        "allow_reset_of_worktree",
        node.child("allow_reset_of_worktree"),
        "true or false",
    ):
        partial["allow_reset_of_worktree"] = raw["allow_reset_of_worktree"]
    if "docker" in raw:
        docker = parse_docker(raw["docker"], node.child("docker"), ctx)
        if docker is not None:
            partial["docker"] = docker
    _warn_unused(raw, node, ctx, partial)
    return partial


def _external_workspace(raw: str, node: Node, ctx: LoadContext) -> Partial | None:
    """An external workspace YAML file: its fields, resolved against its own directory."""
    path = resolve_reference(raw, node.base_dir, ctx.repo_root)
    ctx.depend(path)
    if not ctx.confined(path, node, raw):
        return None
    doc = read_document(path, ctx, node.loc())
    if doc is None:
        return None
    if not isinstance(doc.data, dict):
        ctx.error("E101", "an external workspace file must contain a mapping", Node(doc))
        return None
    if "workspace" in doc.data and isinstance(doc.data["workspace"], dict):
        ctx.error(
            "E101",
            "an external workspace file holds the workspace itself, not a `workspace:` key",
            Node(doc).child("workspace"),
            key=True,
            hint="remove the top-level `workspace:` wrapper",
        )
        return None
    external = parse_workspace(doc.data, Node(doc), ctx)
    if external is not None:
        external["base_dir"] = str(path.parent)
    return external


def _template(raw: Any, node: Node, ctx: LoadContext, partial: Partial) -> None:
    if not isinstance(raw, str) or not raw:
        ctx.error("E101", "workspace template must be a path", node)
        return
    template = resolve_reference(raw, node.base_dir, ctx.repo_root)
    ctx.depend(template)
    if ctx.confined(template, node, raw):
        if template.is_file() and template.suffix == ".code-workspace":
            template = template.parent  # AgentV: a VS Code workspace file's directory
        if not template.is_dir():
            ctx.error("E301", f"workspace template directory not found: {raw}", node)
        partial["template"] = str(template)


def _isolation_and_mode(raw: dict[str, Any], node: Node, ctx: LoadContext, partial: Partial) -> None:
    """`isolation` (or v5's `scope`), `mode`, and `path` (which implies `mode: static`)."""
    isolation = raw.get("isolation")
    if "scope" in raw:
        if raw["scope"] in SCOPES:
            isolation = isolation or SCOPES[raw["scope"]]
        else:
            ctx.error("E103", f"scope must be one of {', '.join(SCOPES)}", node.child("scope"))
    if isolation is not None:
        if isolation in ISOLATION:
            partial["isolation"] = isolation
        else:
            ctx.error("E103", f"isolation must be one of {', '.join(ISOLATION)}", node.child("isolation"))
    if "mode" in raw:
        if raw["mode"] in MODES:
            partial["mode"] = raw["mode"]
        else:
            ctx.error("E103", f"workspace mode must be one of {', '.join(MODES)}", node.child("mode"))
    if "path" in raw:
        if isinstance(raw["path"], str) and raw["path"]:
            static = Path(raw["path"]).expanduser()
            partial["path"] = str(safe_resolve(static if static.is_absolute() else node.base_dir / static))
            partial.setdefault("mode", "static")  # AgentV: a path implies static mode
            ctx.confined(Path(partial["path"]), node.child("path"), raw["path"])  # E305 outside
        else:
            ctx.error("E101", "workspace path must be a directory path", node.child("path"))


def _check_static_path(node: Node, ctx: LoadContext, partial: Partial) -> None:
    """`mode: static` and `path` go together, and a static workspace is shared."""
    if partial.get("mode") == "static" and "path" not in partial and not partial.get("repos"):
        pass  # AgentV falls back to a temporary workspace
    elif partial.get("mode") == "static" and "path" not in partial:
        ctx.error("E102", "`mode: static` needs a `path`", node.child("mode"))
    elif "path" in partial and partial.get("mode") != "static":
        ctx.error("E113", "workspace `path` is only for `mode: static`", node.child("path"), key=True)
    if partial.get("mode") == "static" and partial.get("isolation") == "per_test":
        ctx.error("E113", "`mode: static` cannot be used with `isolation: per_test`", node.child("isolation"))


def _warn_unused(raw: dict[str, Any], node: Node, ctx: LoadContext, partial: Partial) -> None:
    """What is written but not run: AgentV v5 fields, and a reset a fresh workspace makes moot."""
    for key in ("setup", "name"):
        if key in raw:
            ctx.warn(
                "W110",
                f"workspace.{key} is an AgentV v5 field that agentv-ci does not run; it is ignored",
                node.child(key),
                key=True,
                hint="use `hooks.before_all` for setup",
            )
    hooks_raw = partial.get("hooks") or {}
    after_each = hooks_raw.get("after_each") or {}
    if after_each.get("reset") not in (None, "none") and partial.get("isolation") == "per_test":
        ctx.warn(
            "W106",
            "hooks.after_each.reset is redundant with `isolation: per_test`",
            node.child("hooks").child("after_each").child("reset"),
            hint="each test already gets a fresh workspace",
        )


def _merged_hooks(suite: dict[str, Any], test: dict[str, Any]) -> dict[str, WorkspaceHook]:
    hooks: dict[str, WorkspaceHook] = {}
    for name in WORKSPACE_HOOKS:
        fields = {**(suite.get(name) or {}), **(test.get(name) or {})}
        if fields.get("command") is not None or fields.get("reset") is not None:
            hooks[name] = WorkspaceHook(**fields)
    return hooks


def merge_workspace(suite: Partial | None, test: Partial | None) -> WorkspaceSpec | None:
    """The effective workspace of a test (or of a suite, with `test` None): test fields replace suite
    fields, hooks merge field by field, `env` merges key by key."""
    if suite is None and test is None:
        return None
    suite, test = suite or {}, test or {}
    suite_hooks, test_hooks = suite.get("hooks") or {}, test.get("hooks") or {}
    fields = {k: v for k, v in {**suite, **test}.items() if k not in ("hooks", "env")}
    env = {**(suite.get("env") or {}), **(test.get("env") or {})}
    enabled = test_hooks.get("enabled", suite_hooks.get("enabled", True))
    spec = WorkspaceSpec(
        **fields, hooks=_merged_hooks(suite_hooks, test_hooks), hooks_enabled=enabled, env=env
    )
    return spec
