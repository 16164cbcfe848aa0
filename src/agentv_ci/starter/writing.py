"""Writing the starter files into a repository: all of them or none.

Everything is checked before the first byte is written: a file that exists is refused unless
`force` (E008, naming every such file), a directory where a file goes is refused even then, and a
symlink on the way (`.agentv` linked elsewhere, or the file itself) is refused always (E007), so
`init` never writes outside the repository it was given.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from agentv_ci.errors import AgentvCiError, UsageError
from agentv_ci.security.atomic_write import SymlinkedDestination, write_atomically
from agentv_ci.starter import templates
from agentv_ci.text_safety import printable

__all__ = ["ExistingFiles", "StarterFile", "starter_files", "write_starter_files"]

_SHA = re.compile(r"[0-9a-f]{40}")
_VERSION = re.compile(r"v\d+\.\d+\.\d+")


@dataclass(frozen=True)
class StarterFile:
    """One file `init` writes: its path relative to the repository, and its text."""

    path: str
    text: str


class ExistingFiles(AgentvCiError):
    """Files `init` would write already exist: nothing was written."""

    code = "E008"

    def __init__(self, paths: list[Path], *, directories: bool = False) -> None:
        self.paths = paths
        what = "is a directory" if directories else "already exists"
        super().__init__(
            f"{len(paths)} file(s) `init` writes {'are directories' if directories else 'already exist'}; "
            "nothing was written",
            hint="move them away and run again"
            if directories
            else "run `agentv-ci init --force` to overwrite them, or move them away",
        )
        self._what = what

    def render(self) -> str:
        lines = [f"{printable(path)}: error[{self.code}]: {self._what}" for path in self.paths]
        return "\n".join([*lines, f"error: {self.message}", f"  hint: {self.hint}"])


def starter_files(*, action_sha: str | None, action_version: str | None) -> list[StarterFile]:
    """The files, with the workflow pinned to `action_sha` (the placeholder when None)."""
    sha = templates.PLACEHOLDER_SHA if action_sha is None else action_sha
    version = templates.ACTION_VERSION if action_version is None else action_version
    if not _SHA.fullmatch(sha):
        raise UsageError(
            f"--action-sha must be a full commit SHA (40 lower-case hex digits), got {printable(sha)!r}",
            hint=templates.release_commit_command(version) + " prints it",
        )
    if not _VERSION.fullmatch(version):
        raise UsageError(f"--action-version must look like v1.2.3, got {printable(version)!r}")
    return [
        StarterFile(".agentv/targets.yaml", templates.TARGETS_FILE),
        StarterFile("agent/hello_agent.py", templates.AGENT_SCRIPT),
        StarterFile("evals/hello.eval.yaml", templates.EVAL_FILE),
        StarterFile(".github/workflows/agentv-ci.yml", templates.workflow_file(sha, version)),
    ]


def _refuse_symlinks_on_the_way(root: Path, relative: str) -> None:
    path = root
    for part in Path(relative).parts:
        path = path / part
        if path.is_symlink():
            raise SymlinkedDestination(path)


def write_starter_files(root: Path, files: list[StarterFile], *, force: bool) -> list[Path]:
    """Write `files` under `root` (an existing directory); returns their paths. Raises before writing
    anything when one cannot be written."""
    if not root.is_dir():
        raise UsageError(f"{printable(root)} is not a directory", hint="create it, or run init inside it")
    for file in files:
        _refuse_symlinks_on_the_way(root, file.path)
    directories = [root / f.path for f in files if (root / f.path).is_dir()]
    if directories:
        raise ExistingFiles(directories, directories=True)
    existing = [root / f.path for f in files if (root / f.path).exists()]
    if existing and not force:
        raise ExistingFiles(existing)
    written = []
    for file in files:
        destination = root / file.path
        destination.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(destination, file.text.encode("utf-8"))
        written.append(destination)
    return written
