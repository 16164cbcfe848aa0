"""Change-based selection: which eval files a branch affects, and why.

    changes = changed_files(repo, "main")                  # git diff main...HEAD, renames as D + A
    selection = select_changed_evals([repo / "evals"], changes, repo_root=repo)
    for picked in selection.selected:
        print(picked.repo_path, picked.reasons)

`discover_changed_evals` does both in one call (as `agentv-ci discover`); docs/selection.md.

Imports only loading/, targets/config, model/ and errors (never commands/ or github/).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentv_ci.selection.changes import ChangedFile, ChangeSet, changed_files
    from agentv_ci.selection.discover import base_ref, discover_changed_evals
    from agentv_ci.selection.git import GitError, mark_safe_directory, repo_toplevel, resolve_commit
    from agentv_ci.selection.graph import EvalDependencies, eval_dependencies
    from agentv_ci.selection.history import find_merge_base
    from agentv_ci.selection.render import render_selection
    from agentv_ci.selection.select import (
        GLOBAL_CONFIG_FILES,
        GLOBAL_CONFIG_PATTERNS,
        SelectedEval,
        Selection,
        select_changed_evals,
    )
    from agentv_ci.selection.worktree import checkout_worktree

# Each name is loaded from its module when first asked for (PEP 562): a run or a report imports this
# package for its quarantine reader alone, and loading the change graph and git plumbing as well cost
# every such process ~20 ms of start-up.
_SOURCES = {
    "ChangedFile": "agentv_ci.selection.changes",
    "ChangeSet": "agentv_ci.selection.changes",
    "changed_files": "agentv_ci.selection.changes",
    "base_ref": "agentv_ci.selection.discover",
    "discover_changed_evals": "agentv_ci.selection.discover",
    "GitError": "agentv_ci.selection.git",
    "mark_safe_directory": "agentv_ci.selection.git",
    "repo_toplevel": "agentv_ci.selection.git",
    "resolve_commit": "agentv_ci.selection.git",
    "EvalDependencies": "agentv_ci.selection.graph",
    "eval_dependencies": "agentv_ci.selection.graph",
    "find_merge_base": "agentv_ci.selection.history",
    "render_selection": "agentv_ci.selection.render",
    "GLOBAL_CONFIG_FILES": "agentv_ci.selection.select",
    "GLOBAL_CONFIG_PATTERNS": "agentv_ci.selection.select",
    "SelectedEval": "agentv_ci.selection.select",
    "Selection": "agentv_ci.selection.select",
    "select_changed_evals": "agentv_ci.selection.select",
    "checkout_worktree": "agentv_ci.selection.worktree",
}


def __getattr__(name: str) -> object:
    source = _SOURCES.get(name)
    if source is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(source), name)


__all__ = [
    "GLOBAL_CONFIG_FILES",
    "GLOBAL_CONFIG_PATTERNS",
    "ChangeSet",
    "ChangedFile",
    "EvalDependencies",
    "GitError",
    "SelectedEval",
    "Selection",
    "base_ref",
    "changed_files",
    "checkout_worktree",
    "discover_changed_evals",
    "eval_dependencies",
    "find_merge_base",
    "mark_safe_directory",
    "render_selection",
    "repo_toplevel",
    "resolve_commit",
    "select_changed_evals",
]
