"""A reset of a static workspace must not rewrite the repository someone works in.

`workspace: {mode: static, path: ...}` with a `reset` restores that directory between tests
(running/snapshots.py). When the directory lies in a git work tree (the eval files' own checkout,
`path: .`, or any other), or contains the eval files' checkout, that is refused (E306, at `path`)
unless the workspace says `allow_reset_of_worktree: true`. The runner checks the same again before
it takes the snapshot.
"""

from __future__ import annotations

from pathlib import Path

from agentv_ci.loading.context import LoadContext, Node
from agentv_ci.loading.workspace import Partial, merge_workspace
from agentv_ci.model.workspace import WorkspaceSpec
from agentv_ci.security.worktrees import work_tree_touched_by


def worktree_reset_refusal(spec: WorkspaceSpec | None, repo_root: Path) -> str | None:
    """Why resetting `spec`'s static path is refused, or None when it is not."""
    if spec is None or spec.mode != "static" or spec.path is None or not spec.resets:
        return None
    if spec.allow_reset_of_worktree:
        return None
    tree = work_tree_touched_by(spec.path, repo_root)
    if tree is None:
        return None
    return (
        f"the static workspace {spec.path} is reset between tests, and that would rewrite the git "
        f"work tree {tree}"
    )


HINT = (
    "resets restore the workspace to how it was after before_all (never committing, never deleting "
    "a file the run did not create); to reset it anyway add `allow_reset_of_worktree: true` to the "
    "workspace, or use a `path` outside any git work tree (with --allow-outside-repo DIR)"
)


def check_worktree_reset(suite: Partial | None, test: Partial | None, node: Node, ctx: LoadContext) -> None:
    """E306 at the workspace's `path` (else the workspace) when its resets would rewrite a work tree."""
    if test is not None and test.keys().isdisjoint({"path", "mode", "hooks", "allow_reset_of_worktree"}):
        return  # the suite's workspace is checked once, where it is written
    why = worktree_reset_refusal(merge_workspace(suite, test), ctx.repo_root)
    if why is not None:
        own = (test if test is not None else suite) or {}
        where = node.child("path") if "path" in own and "base_dir" not in own else node
        ctx.error("E306", why, where, hint=HINT)
