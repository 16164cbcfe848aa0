"""Load-time checks of the scripts commands run (code graders, workspace hooks, preprocessors): the
script must exist inside the repository, and it, its directory and what else the command runs are
dependencies of the suite (change-based selection)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from agentv_ci.loading.command_paths import command_files, script_position
from agentv_ci.loading.command_paths import looks_like_script as _looks_like_script
from agentv_ci.loading.context import LoadContext, Node, type_name
from agentv_ci.loading.paths import resolve_reference, safe_resolve

__all__ = ["check_command_files", "check_script_argument", "depend_on_command", "depend_on_script"]


def _argv(command: Any) -> list[str] | None:
    if isinstance(command, str):
        try:
            return shlex.split(command)
        except ValueError:
            return None
    if isinstance(command, list):
        return [a if isinstance(a, str) else "" for a in command]
    return None


def depend_on_script(path: Path, node: Node, ctx: LoadContext) -> None:
    """A script and its directory (its helper modules live there) are dependencies; the directory
    only when it is a directory of its own, not the one the grader is written in nor the repo root
    (there every sibling eval file would count as a helper)."""
    ctx.depend(path)
    directory = path.parent
    if directory != node.base_dir and directory.name and directory != safe_resolve(ctx.repo_root):
        ctx.depend(directory)


def depend_on_command(command: Any, node: Node, ctx: LoadContext, cwd: Path) -> None:
    """What else the command runs: `python -m` modules, scripts named in `sh -c` strings, and the
    in-repo modules its Python scripts import (`command_paths.command_files`) are dependencies."""
    if not (
        isinstance(command, str) or (isinstance(command, list) and all(isinstance(a, str) for a in command))
    ):
        return
    found = command_files(command, cwd, safe_resolve(ctx.repo_root))
    for path in found.scripts:
        if ctx.confinement.permits(path):
            depend_on_script(path, node, ctx)
    for path in (*found.imports, *found.arguments):
        if ctx.confinement.permits(path):
            ctx.depend(path)


def check_script_argument(command: Any, node: Node, ctx: LoadContext, cwd: Path, *, what: str) -> None:
    """The script a hook or preprocessor command runs must exist (relative to `cwd`) and lie inside
    the repository (E301 / E305 at that argument); the other path-like arguments that exist are
    dependencies (editing them selects the suite), and are never taken for scripts."""
    argv = _argv(command)
    if not argv:
        return
    position = script_position(argv)
    for index, arg in enumerate(argv):
        if any(ch in arg for ch in "$*{}") or not (_looks_like_script(arg) or index == position):
            continue
        where = node.child(index) if isinstance(command, list) else node
        path = safe_resolve(cwd / arg)
        if index == position:
            if not path.exists():
                path = resolve_reference(arg, cwd, ctx.repo_root)
            depend_on_script(path, node, ctx)
            if ctx.confined(path, where, arg) and not path.exists():
                ctx.error("E301", f"{what} not found: {arg}", where, hint=f"resolved relative to {cwd}")
        elif path.exists():
            ctx.depend(path)
    depend_on_command(command, node, ctx, cwd)


def check_command_files(command: Any, node: Node, ctx: LoadContext, cwd: Any = None) -> None:
    """A code-grader's script (the argument in the script position, see `script_position`) must
    exist, relative to its `cwd` (itself relative to the eval file); other path-like arguments are
    dependencies when they exist."""
    if isinstance(command, str):
        try:
            argv = shlex.split(command)
        except ValueError:
            return
    elif isinstance(command, list) and all(isinstance(a, str) for a in command):
        argv = list(command)
    else:
        ctx.error("E101", f"command must be a string or a list of strings, got {type_name(command)}", node)
        return
    if not argv:
        ctx.error("E103", "command is empty", node)
        return
    base = node.base_dir / cwd if isinstance(cwd, str) and cwd else node.base_dir
    depend_on_command(command, node, ctx, base)
    position = script_position(argv)
    for index, arg in enumerate(argv):
        if not (_looks_like_script(arg) or index == position) or any(ch in arg for ch in "$*{}"):
            continue
        path = resolve_reference(arg, base, ctx.repo_root)
        where = node.child(index) if isinstance(command, list) else node
        if index != position:
            if path.exists() and ctx.confinement.permits(path):
                depend_on_script(path, node, ctx)
            continue
        depend_on_script(path, node, ctx)
        if not path.exists() and ctx.graders_in_container:
            continue  # a docker workspace's image may hold it (`/testbed/run_tests.py`)
        if not ctx.confined(path, where, arg):
            continue
        if not path.exists():
            ctx.error(
                "E301",
                f"grader script not found: {arg}",
                where,
                hint=f"resolved relative to {base}",
            )
