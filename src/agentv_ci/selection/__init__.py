"""Change-based selection: which eval files a branch affects, and why.

    changes = changed_files(repo, "main")                  # git diff main...HEAD, renames as D + A
    selection = select_changed_evals([repo / "evals"], changes, repo_root=repo)
    for picked in selection.selected:
        print(picked.repo_path, picked.reasons)

`discover_changed_evals` does both in one call (as `agentv-ci discover`); docs/selection.md.

Imports only loading/, targets/config, model/ and errors (never commands/ or github/).
"""

from __future__ import annotations

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
