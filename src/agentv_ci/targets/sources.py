"""Which files of the repository are a target's own code: what change-based selection watches for
the evals that run on it, and what the response cache keys on.

- `sources:` in targets.yaml, when given: paths or globs relative to the project directory (the
  directory holding `.agentv/`, or the targets file's own directory for a `targets.yaml` elsewhere;
  a leading `/` is the repository root). A directory counts with everything below it.
- Otherwise, for a target that runs a command (`cli`, the coding agents, any provider with a
  `command` or `executable`): the script the command names (through `sh -c "..."`, `python -m`,
  `uv run`, shell scripts it calls: `command_paths.command_files`), the in-repo Python modules it
  imports, the other existing files it names, and the script's directory tree (not when the script
  sits at the repository root: every file would count).
- A `cli` command that names no file of the repository, or runs code it does not name (`make`,
  `npm run x`, `npx tool`, `python -c ...`, `node -e ...`, an installed entry point): the whole
  repository (`repository`), less the eval files and what `.gitignore` excludes. Errs towards
  keying: `sources:` narrows it.

    sources = target_sources(definition, targets_file=path, repo_root=repo, base_dir=eval_dir)
    target_source_files(definition, path, repo)   # every existing file, sorted

Model API targets (`openai`, ...) have no sources of their own.
"""

from __future__ import annotations

import glob
import os
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentv_ci.loading.command_paths import CommandFiles, command_files
from agentv_ci.loading.paths import safe_resolve
from agentv_ci.loading.python_imports import SKIPPED_PARTS
from agentv_ci.targets.environment import find_repo_root

if TYPE_CHECKING:  # annotations only: config.py imports this module to check `sources:`
    from agentv_ci.targets.config import TargetDefinition

__all__ = [
    "CODE_PROVIDERS",
    "CommandFiles",
    "TargetSources",
    "command_files",
    "outside_repository",
    "repository_root_of",
    "sources_root",
    "target_source_files",
    "target_sources",
]

# Providers that run a program (its own code or an agent CLI), shell-run (`cli`) or not.
SHELL_PROVIDERS = frozenset({"cli"})
CODE_PROVIDERS = frozenset(
    {"cli", "claude", "claude-cli", "codex", "copilot-cli", "pi-cli", "pi-coding-agent"}
)
_COMMAND_KEYS = ("command", "executable", "binary")  # the agents read AgentV's `command`/`binary` too
_MAGIC = frozenset("*?[")


@dataclass(frozen=True)
class TargetSources:
    """A target's code, as absolute paths inside the repository."""

    target: str
    files: tuple[Path, ...] = ()  # named files (a named script may be missing: it was deleted)
    directories: tuple[Path, ...] = ()  # trees: every file below counts
    glob_roots: tuple[Path, ...] = ()  # fixed leading directories of `sources:` globs (new matches)
    cwd: Path | None = None  # the target's `cwd:`, resolved (where it runs; not part of its code)
    declared: bool = False  # from `sources:` (else found from the command)
    repository: Path | None = None  # the root, when the code is the whole repository

    @property
    def paths(self) -> tuple[Path, ...]:
        """Files, directories and glob roots (the repository root for a command that names no
        file): what a change below selects the target's evals."""
        whole = (self.repository,) if self.repository is not None else ()
        return tuple(dict.fromkeys((*self.files, *self.directories, *self.glob_roots, *whole)))

    def all_files(self) -> list[Path]:
        """Every existing regular file: the named files and those below the directories (skipping
        `.git`, `node_modules`, virtualenvs and caches), sorted, each once."""
        found: dict[Path, None] = {path: None for path in self.files if path.is_file()}
        for directory in self.directories:
            found.update((path, None) for path in _walk(directory))
        return sorted(found)


def _walk(directory: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_PARTS and d != ".agentv-ci")  # run output
        base = Path(root)
        for name in files:
            path = base / name
            if path.is_file():
                yield path


def sources_root(targets_file: Path) -> Path:
    """Where `sources:` entries resolve: the directory holding `.agentv/` for a targets file inside
    one, else the targets file's directory."""
    parent = safe_resolve(targets_file).parent
    return parent.parent if parent.name == ".agentv" else parent


def repository_root_of(targets_file: Path) -> Path:
    """The git work tree holding `targets_file`, else the directory its `sources:` resolve from."""
    start = safe_resolve(targets_file).parent
    return find_repo_root(start) or sources_root(targets_file)


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _entry_path(entry: str, targets_file: Path, repo_root: Path) -> Path:
    text = entry.strip()
    if text.startswith("/"):
        return repo_root / text.lstrip("/")
    return sources_root(targets_file) / text


def outside_repository(entry: str, targets_file: Path, repo_root: Path | None = None) -> Path | None:
    """Where a `sources:` entry leads when that is outside the repository (None: inside). Globs are
    judged by their fixed leading directory."""
    root = (
        safe_resolve(repo_root) if repo_root is not None else safe_resolve(repository_root_of(targets_file))
    )
    path = _entry_path(entry, targets_file, root)
    fixed = _glob_root(path) if _MAGIC.intersection(str(path)) else path
    resolved = safe_resolve(fixed)
    return None if _inside(resolved, root) else resolved


def _glob_root(path: Path) -> Path:
    parts: list[str] = []
    for part in path.parts:
        if _MAGIC.intersection(part):
            break
        parts.append(part)
    return Path(*parts) if parts else Path("/")


def _declared(
    definition: TargetDefinition, targets_file: Path, repo_root: Path
) -> tuple[tuple[Path, ...], tuple[Path, ...], tuple[Path, ...]]:
    """(files, directories, glob roots) of `sources:`."""
    files: dict[Path, None] = {}
    directories: dict[Path, None] = {}
    roots: dict[Path, None] = {}
    for entry in definition.sources or ():
        path = _entry_path(entry, targets_file, repo_root)
        if _MAGIC.intersection(str(path)):
            root = safe_resolve(_glob_root(path))
            if _inside(root, repo_root):
                roots[root] = None
            for match in sorted(glob.glob(str(path), recursive=True)):
                found = safe_resolve(Path(match))
                if _inside(found, repo_root):
                    (directories if found.is_dir() else files)[found] = None
            continue
        found = safe_resolve(path)
        if _inside(found, repo_root):
            (directories if found.is_dir() else files)[found] = None
    return tuple(files), tuple(directories), tuple(roots)


def _cwd(definition: TargetDefinition, base_dir: Path | None) -> Path | None:
    cwd = definition.fields.get("cwd")
    if not isinstance(cwd, str) or not cwd.strip():
        return None
    return safe_resolve((base_dir or Path.cwd()) / cwd)


def _command(definition: TargetDefinition) -> list[str] | str | None:
    """What the target runs: a `cli` command (a shell string), else the agent's executable words
    followed by its `args`."""
    values = (definition.fields.get(key) for key in _COMMAND_KEYS)
    text = next((v for v in values if isinstance(v, str) and v.strip()), None)
    if text is None:
        return None
    if definition.provider in SHELL_PROVIDERS:
        return text
    try:
        words = shlex.split(text)
    except ValueError:
        return None
    args = definition.fields.get("args")
    if isinstance(args, list):
        words += [a for a in args if isinstance(a, str)]
    return words


def target_sources(
    definition: TargetDefinition,
    *,
    targets_file: Path | None,
    repo_root: Path,
    base_dir: Path | None = None,
) -> TargetSources:
    """The code of `definition` (a resolved target, not an alias). `base_dir` is where its relative
    `cwd` and command resolve (the eval file's directory, as `TargetsConfig.base_dir`); by default the
    project directory of `targets_file`."""
    root = safe_resolve(repo_root)
    if base_dir is None:
        base_dir = sources_root(targets_file) if targets_file is not None else root
    if definition.sources is not None and targets_file is not None:
        files, directories, roots = _declared(definition, targets_file, root)
        return TargetSources(definition.name, files, directories, roots, _cwd(definition, base_dir), True)
    cwd = _cwd(definition, base_dir)
    command = _command(definition)
    if command is None:
        return TargetSources(definition.name, cwd=cwd)
    found = command_files(command, cwd or base_dir, root)
    trees = {path.parent: None for path in found.scripts if path.parent != root}
    whole = root if found.unnamed_code and definition.provider in SHELL_PROVIDERS else None
    return TargetSources(definition.name, found.files, tuple(trees), (), cwd, False, whole)


def target_source_files(
    definition: TargetDefinition, targets_file: Path | None, repo_root: Path, *, base_dir: Path | None = None
) -> list[Path]:
    """Every existing file of the target's code (see `target_sources`), sorted: what a key over the
    target's code should hash."""
    found = target_sources(definition, targets_file=targets_file, repo_root=repo_root, base_dir=base_dir)
    return found.all_files()
