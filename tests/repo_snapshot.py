"""This repository as it stands (tracked and new files, not ignored ones) committed into a new git
repository on `main`: what a fresh `git clone` of it would hold once these changes are committed."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.conftest import REPO_ROOT

GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd: Path, *args: str) -> str:
    """`git <args>` in `cwd` with no user or system config; stdout."""
    done = subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=cwd, env={**os.environ, **GIT_ENV}, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return done.stdout


def snapshot_repository(dest: Path) -> Path:
    """Copy this checkout's files into `dest` and commit them there on `main`; returns `dest`."""
    files = git(REPO_ROOT, "ls-files", "--cached", "--others", "--exclude-standard").splitlines()
    for name in files:
        source = REPO_ROOT / name
        if source.is_file():  # a tracked file deleted in the work tree is left out
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-qm", "snapshot")
    return dest
