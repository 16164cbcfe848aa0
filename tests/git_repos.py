"""Real git repositories for tests: `git` run without the machine's user or system config, a
`GitRepo` work tree to write, commit, branch and clone, and `snapshot_repository`, this checkout
committed into a new repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd: Path, *args: str) -> str:
    """`git <args>` in `cwd` with a fixed identity; stdout, stripped. The machine's global and
    system config are left out, unless the test set its own (`GIT_CONFIG_GLOBAL` in the environment,
    as tests/selection/conftest.py does)."""
    env = dict(os.environ)
    if "GIT_CONFIG_GLOBAL" not in env:
        env.update(GIT_ENV)
    done = subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=cwd, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed in {cwd}: {done.stderr}")
    return done.stdout.strip()


class GitRepo:
    """A work tree with helpers; `init` makes a repository whose first branch is `main`."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @classmethod
    def init(cls, root: Path) -> GitRepo:
        root.mkdir(parents=True, exist_ok=True)
        git(root, "init", "--quiet", "--initial-branch=main")
        return cls(root)

    def git(self, *args: str) -> str:
        return git(self.root, *args)

    def write(self, rel: str, text: str = "") -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        return path

    def delete(self, rel: str) -> None:
        (self.root / rel).unlink()

    def commit(self, message: str = "change") -> str:
        self.git("add", "--all")
        self.git("commit", "--quiet", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    def branch(self, name: str) -> None:
        self.git("checkout", "--quiet", "-b", name)

    def checkout(self, name: str) -> None:
        self.git("checkout", "--quiet", name)

    def clone(self, into: Path, *args: str) -> GitRepo:
        git(into.parent, "clone", "--quiet", *args, f"file://{self.root}", into.name)
        return GitRepo(into)


def snapshot_repository(dest: Path) -> Path:
    """This checkout's files (tracked and new, not ignored) copied into `dest` and committed there on
    `main`: what a fresh `git clone` would hold once these changes are committed. Returns `dest`."""
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
