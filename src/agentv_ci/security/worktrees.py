"""Which git work tree a directory belongs to, so a workspace reset never rewrites the repository
someone works in (the eval files' own checkout, or any other) unless that is explicitly allowed.

Found on the file system (a `.git` directory or file in the directory or a parent), without running
git, so `validate` and the runner agree and nothing is executed to find out.
"""

from __future__ import annotations

from pathlib import Path

from agentv_ci.security.confinement import real_path


def work_tree_of(path: Path | str) -> Path | None:
    """The top of the git work tree `path` lies in (symlinks followed; a missing tail is looked up
    from its nearest existing parent), or None outside git."""
    probe = real_path(path)
    for folder in (probe, *probe.parents):
        if (folder / ".git").exists():
            return folder
    return None


def work_tree_touched_by(directory: Path | str, repo_root: Path | str) -> Path | None:
    """The git work tree a reset of `directory` would rewrite: the one `directory` lies in, or
    `repo_root` (the eval files' checkout) when `directory` contains it. None when neither."""
    inside = work_tree_of(directory)
    if inside is not None:
        return inside
    root = work_tree_of(repo_root)
    if root is not None and root.is_relative_to(real_path(directory)):
        return root
    return None
