"""Files the container writes stay usable by the job's later steps.

A Docker action runs as root while the runner's own steps run as the workspace's owner (uid 1001 on
GitHub's hosted runners): a root-owned results directory could be read but not cleaned up or
overwritten by a later step. Everything the Action created is handed over to the workspace's owner.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


def _chown_tree(path: Path, uid: int, gid: int) -> None:
    if path.is_symlink():
        return
    try:
        os.chown(path, uid, gid)
    except OSError:
        return
    if path.is_dir():
        for root, dirs, files in os.walk(path):
            for name in (*dirs, *files):
                child = Path(root) / name
                if not child.is_symlink():
                    try:
                        os.chown(child, uid, gid)
                    except OSError:
                        pass


def hand_over(paths: Iterable[Path], workspace: Path) -> None:
    """Give `paths` (and what they contain), and the directories between them and `workspace`, to the
    workspace's owner. Does nothing unless running as root for a workspace someone else owns."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return
    try:
        info = workspace.stat()
    except OSError:
        return
    if info.st_uid == 0:
        return
    root = workspace.resolve()
    for path in paths:
        if not path.exists():
            continue
        resolved = path.resolve()
        if resolved != root and root not in resolved.parents:
            continue  # never touch anything outside the workspace
        _chown_tree(resolved, info.st_uid, info.st_gid)
        for parent in resolved.parents:
            if parent == root:
                break
            try:
                if parent.stat().st_uid == 0:
                    os.chown(parent, info.st_uid, info.st_gid)
            except OSError:
                pass
