"""Real git repositories for selection tests: write files, commit, branch, clone."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
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
