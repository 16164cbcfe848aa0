"""Confined, size-capped file reads for plugins (`agentv_ci.api.read_confined_file`).

A plugin that reads a file its config names (a JSON Schema, a word list, a template) gets the loader's
guarantees with one call: the path is resolved against `base_dir` (the eval file's directory), every
symlink is followed, and the file must lie inside the repository (the git top level of `base_dir`,
or a directory allowed with `--allow-outside-repo` / `AGENTV_CI_ALLOW_OUTSIDE_REPO`); it must be a
regular file (never a FIFO or `/dev/zero`) of at most `max_bytes` (by default the loader's cap,
64 MiB). At most `max_bytes + 1` bytes are ever read, so a file that grows while it is read cannot
exhaust memory either.

Every refusal is a `ConfinedReadError` (a `ConfigError`): raised from a plugin's `__init__` it is a
located `validate` error (exit 2); raised while grading it is that grader's execution error.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from agentv_ci.errors import ConfigError
from agentv_ci.model.source import SourceLocation
from agentv_ci.security.confinement import (
    ALLOW_OUTSIDE_ENV,
    Confinement,
    allowed_from_env,
    find_repo_root,
    real_path,
)

__all__ = ["DEFAULT_MAX_BYTES", "ConfinedReadError", "allow_for_plugins", "read_confined_file"]

DEFAULT_MAX_BYTES = 64 * 1024 * 1024  # as the loader's MAX_DOCUMENT_BYTES

# Directories this invocation allowed with `--allow-outside-repo` (the loader registers them), so a
# plugin's reads are widened exactly as the loader's are, never by anything in the repository.
_ALLOWED: dict[Path, None] = {}


class ConfinedReadError(ConfigError):
    """A plugin's file read was refused: outside the repository, not a regular file, too large, or
    unreadable. The message names the path; the hint says how to fix it."""


def allow_for_plugins(directories: Iterable[Path]) -> None:
    """Widen plugin reads by the directories the invocation allowed (called by the loader)."""
    for directory in directories:
        _ALLOWED[real_path(directory)] = None


def confinement_for(base_dir: Path) -> Confinement:
    """Where a plugin under `base_dir` may read: its repository and the allowed directories."""
    allowed = [*_ALLOWED, *allowed_from_env(os.environ)]
    return Confinement.at(find_repo_root(base_dir), allowed)


def _size(count: int) -> str:
    if count % (1024 * 1024) == 0:
        return f"{count // (1024 * 1024)} MiB"
    return f"{count // 1024} KiB" if count % 1024 == 0 else f"{count} bytes"


def _too_large(written: str, max_bytes: int, location: SourceLocation | None) -> ConfinedReadError:
    return ConfinedReadError(
        f"{written} is larger than {_size(max_bytes)}",
        location=location,
        hint="use a smaller file (plugins read files of at most this size)",
    )


def read_confined_file(
    path: str | os.PathLike[str],
    *,
    base_dir: Path,
    max_bytes: int = DEFAULT_MAX_BYTES,
    location: SourceLocation | None = None,
) -> bytes:
    """The bytes of `path` (relative to `base_dir`; `file://` optional), read under the loader's
    confinement and size cap; `ConfinedReadError` at `location` otherwise (see the module docstring)."""
    raw = os.fspath(path)
    written = raw.removeprefix("file://")
    target = Path(base_dir) / written
    confinement = confinement_for(Path(base_dir))
    real = real_path(target)
    if not confinement.permits(real):
        shown = f"{written} (-> {real})" if str(real) != written else written
        raise ConfinedReadError(
            f"{shown} is outside the repository",
            location=location,
            hint=(
                f"files a plugin reads must be inside {confinement.describe()}; to allow another "
                f"directory, run with --allow-outside-repo DIR (or set {ALLOW_OUTSIDE_ENV}=DIR)"
            ),
        )
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        missing = isinstance(exc, FileNotFoundError)
        raise ConfinedReadError(
            f"file not found: {written}" if missing else f"cannot read {written}: {exc.strerror or exc}",
            location=location,
            hint=f"the path is relative to the eval file's directory, {base_dir}",
        ) from None
    try:
        mode = os.fstat(fd)
        if not stat.S_ISREG(mode.st_mode):
            raise ConfinedReadError(
                f"{written} is not a regular file", location=location, hint="name a file in the repository"
            )
        if mode.st_size > max_bytes:
            raise _too_large(written, max_bytes, location)
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read(max_bytes + 1)
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise _too_large(written, max_bytes, location)
    return data
