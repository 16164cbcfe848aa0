"""A temporary detached work tree at another commit (the merge-base for a baseline run, or a head
that is not checked out)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agentv_ci.selection.git import GitError, repo_toplevel, resolve_commit, run_git


@contextmanager
def checkout_worktree(repo: Path, ref: str) -> Iterator[Path]:
    """`git worktree add --detach` of `ref` in a new temporary directory; yields its root, then
    removes the work tree (and git's record of it) even when the body raised."""
    root = repo_toplevel(repo)
    sha = resolve_commit(root, ref)
    parent = Path(tempfile.mkdtemp(prefix="agentv-ci-worktree-"))
    tree = parent / "tree"
    try:
        run_git("worktree", "add", "--detach", "--quiet", str(tree), sha, cwd=root)
        yield tree
    finally:
        try:
            run_git("worktree", "remove", "--force", str(tree), cwd=root, check=False)
        except GitError:
            pass  # git vanished mid-way: the directory goes below, `git worktree prune` tidies later
        shutil.rmtree(parent, ignore_errors=True)
        run_git("worktree", "prune", cwd=root, check=False)
