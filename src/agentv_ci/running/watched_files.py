"""Files a run is told every eval depends on: the Action's `select_all_on` globs. A change to one
selects every eval (selection/select.py), so its content must key every cached answer too, or a
baseline re-run at the merge-base is answered from the entry the PR's run just wrote for the same
request (a prompt file the agent reads beside its own directory, changed by the PR).

    digest = watched_digest(["prompts/**"], repo_root)   # None: no patterns

The globs match repo-relative paths as `select_all_on` does (`*` also crosses `/`; a leading `/`
is the repository root). The files are the ones git tracks (outside a git repository: every file
below `root`, without `.git`, virtualenvs and caches), hashed once per run: the SHA-256 of the sorted
(path, SHA-256 of the content) list; a deleted file drops out of it.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Iterator, Sequence
from fnmatch import fnmatchcase
from pathlib import Path

import msgspec

from agentv_ci.loading.python_imports import SKIPPED_PARTS

__all__ = ["watched_digest", "watched_files"]

_ENCODER = msgspec.msgpack.Encoder(order="sorted")


def _tracked(root: Path) -> list[str] | None:
    """Repo-relative paths of the files git tracks below `root` (None: not a git work tree)."""
    try:
        done = subprocess.run(
            ["git", "-c", "core.quotepath=off", "ls-files", "-z", "--full-name", "--", "."],
            cwd=root,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return [p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


def _walked(root: Path) -> Iterator[str]:
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in SKIPPED_PARTS and d != ".agentv-ci")
        for name in files:
            yield (Path(directory) / name).relative_to(root).as_posix()


def watched_files(patterns: Sequence[str], root: Path) -> list[tuple[str, str | None]]:
    """Every tracked file below `root` matching one of `patterns`, as (repo-relative path, SHA-256
    of its content, None when it cannot be read), sorted."""
    globs = [p.strip().lstrip("/") for p in patterns if p.strip()]
    if not globs:
        return []
    listed = _tracked(root)
    paths = listed if listed is not None else list(_walked(root))
    found: list[tuple[str, str | None]] = []
    for path in sorted(set(paths)):
        if any(fnmatchcase(path, glob) for glob in globs):
            found.append((path, _digest(root / path)))
    return found


def _digest(path: Path) -> str | None:
    try:
        with open(path, "rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError:  # a submodule's directory, a file deleted in the work tree
        return None


def watched_digest(patterns: Sequence[str], root: Path) -> str | None:
    """The SHA-256 over the patterns and `watched_files`; None when there are no patterns."""
    if not any(p.strip() for p in patterns):
        return None
    entries = [sorted(p.strip().lstrip("/") for p in patterns if p.strip()), watched_files(patterns, root)]
    return hashlib.sha256(_ENCODER.encode(entries)).hexdigest()
