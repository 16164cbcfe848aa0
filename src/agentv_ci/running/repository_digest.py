"""The whole repository as one digest: the code of a `cli` target whose command names no file of
the repository (`make`, `npm run x`, `python -c ...`; targets/sources.py), for the response cache.

In a git work tree the digest is built from git's index (the blob ids it already holds: unchanged
files are not read) plus the files the work tree changed or added that `.gitignore` does not
exclude (those are read and hashed). Outside one, every file below the root is read. Left out: eval
files (each test keys its own eval file and what it reads), committed baseline sidecars (rewritten
by `--update-baseline`), agentv-ci's own output (`.agentv-ci/`) and what is derived or installed
(`__pycache__/`, `node_modules/`, virtualenvs: as targets/sources.py skips them).

    digest = repository_digest(repo_root)   # a SHA-256, hex
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import msgspec

from agentv_ci.loading.discovery import is_eval_file_name
from agentv_ci.loading.python_imports import SKIPPED_PARTS

__all__ = ["repository_digest"]

_GIT_TIMEOUT_S = 120.0
_ENCODER = msgspec.msgpack.Encoder(order="sorted")
_SIDECAR_SUFFIX = ".baseline.jsonl"
_OUTPUT_DIR = ".agentv-ci"
_SKIPPED = SKIPPED_PARTS - {".git"}  # `.git` never reaches git's own lists


def _left_out(path: str) -> bool:
    """Eval files, their sidecars, agentv-ci's output, and what is derived or installed rather
    than written (`__pycache__`, `node_modules`, virtualenvs): not the agent's own code."""
    parts = path.split("/")
    name = parts[-1]
    return (
        is_eval_file_name(name)
        or name.endswith(_SIDECAR_SUFFIX)
        or _OUTPUT_DIR in parts[:-1]
        or not _SKIPPED.isdisjoint(parts[:-1])
    )


def _content(path: Path) -> str | None:
    """`link:<target>` for a symlink, the SHA-256 of a file's bytes, None for anything else."""
    try:
        if path.is_symlink():
            return "link:" + os.readlink(path)
        with open(path, "rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError:
        return None


def _git(root: Path, *args: str) -> bytes | None:
    env = {**os.environ, "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
    try:
        done = subprocess.run(
            ["git", "-c", "core.quotepath=off", *args],
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _from_git(root: Path) -> dict[str, str] | None:
    """Path -> blob id (index) or content digest (work tree changes); None when git cannot say."""
    staged = _git(root, "ls-files", "-z", "--stage")
    changed = _git(root, "ls-files", "-z", "--modified", "--deleted", "--others", "--exclude-standard")
    if staged is None or changed is None:
        return None
    entries: dict[str, str] = {}
    for record in staged.split(b"\0"):
        meta, _, name = record.partition(b"\t")
        path = name.decode("utf-8", "surrogateescape")
        if path and not _left_out(path):
            mode, blob = meta.split(b" ")[:2]
            entries[path] = f"{mode.decode()}:{blob.decode()}"  # a submodule: its commit
    for name in changed.split(b"\0"):
        path = name.decode("utf-8", "surrogateescape")
        if not path or _left_out(path):
            continue
        full = root / path
        if full.is_dir() and not full.is_symlink():
            continue  # a submodule's or a nested repository's directory: keyed by its commit above
        digest = _content(full)
        if digest is None:
            entries.pop(path, None)  # deleted in the work tree
        else:
            entries[path] = digest
    return entries


def _walked(root: Path) -> dict[str, str]:
    entries: dict[str, str] = {}
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = [d for d in subdirs if d not in SKIPPED_PARTS and d != _OUTPUT_DIR]
        for name in files:
            full = Path(directory) / name
            path = full.relative_to(root).as_posix()
            digest = None if _left_out(path) else _content(full)
            if digest is not None:
                entries[path] = digest
    return entries


def repository_digest(root: Path) -> str:
    """SHA-256 over every file of the repository at `root` that can be an agent's code (see the
    module docstring): relative path + blob id or content digest."""
    entries = _from_git(root)
    if entries is None:
        entries = _walked(root)
    return hashlib.sha256(_ENCODER.encode(sorted(entries.items()))).hexdigest()
