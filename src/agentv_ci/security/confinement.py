"""File confinement: every file an eval file references (inputs, case files, includes, templates,
prompt files, scripts, workspace templates) must lie inside the repository root after symlinks are
followed, so a pull request cannot send `/etc/passwd` or `~/.ssh/id_rsa` to a model or into a report.

The root is the git top level of the eval file (its directory outside git). More directories are
allowed only from the invocation: `--allow-outside-repo DIR` (repeatable) or the environment variable
`AGENTV_CI_ALLOW_OUTSIDE_REPO` (directories separated by `:`), never from a file in the repository,
which a pull request can edit as easily as the eval file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

ALLOW_OUTSIDE_ENV = "AGENTV_CI_ALLOW_OUTSIDE_REPO"


def real_path(path: Path | str) -> Path:
    """`path` absolute with every symlink that exists followed (a loop or a missing tail is kept as
    written, so the caller's own read reports it)."""
    return Path(os.path.realpath(path))


def find_repo_root(start: Path) -> Path:
    """The confinement root of `start`: the nearest directory (from `start` upwards) holding `.git`,
    else `start` itself."""
    start = start.resolve()
    probe = start if start.is_dir() else start.parent
    for candidate in (probe, *probe.parents):
        if (candidate / ".git").exists():
            return candidate
    return probe


def allowed_from_env(env: Mapping[str, str]) -> tuple[Path, ...]:
    """The directories `AGENTV_CI_ALLOW_OUTSIDE_REPO` names (`:`-separated; blanks ignored)."""
    raw = env.get(ALLOW_OUTSIDE_ENV, "")
    return tuple(Path(part) for part in raw.split(os.pathsep) if part.strip())


@dataclass(frozen=True)
class Confinement:
    """Where referenced files may live: `root` and the explicitly allowed directories (all real paths)."""

    root: Path
    allowed: tuple[Path, ...] = ()

    @classmethod
    def at(cls, root: Path, allowed: Iterable[Path] = ()) -> Confinement:
        return cls(real_path(root), tuple(dict.fromkeys(real_path(p) for p in allowed)))

    def permits(self, path: Path | str) -> bool:
        """True when `path`, symlinks followed, is the root or an allowed directory or lies below one."""
        real = real_path(path)
        return any(real.is_relative_to(base) for base in (self.root, *self.allowed))

    def describe(self) -> str:
        """The root (and allowed directories) for a message."""
        if not self.allowed:
            return str(self.root)
        return f"{self.root} (or {', '.join(str(p) for p in self.allowed)})"


def outside_hint(confinement: Confinement) -> str:
    """How to allow a file outside the repository, for the E305 diagnostic."""
    return (
        f"files an eval references must be inside {confinement.describe()}; to allow another directory, "
        f"run with --allow-outside-repo DIR (or set {ALLOW_OUTSIDE_ENV}=DIR)"
    )
