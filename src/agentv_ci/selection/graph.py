"""The dependency graph: each eval file -> every file and directory it reads, as recorded by the same
loader that runs it (`load_suite`, `LoadResult.dependencies`), plus the targets file that applies.

Thousands of eval files load in parallel processes; grader building, which adds diagnostics but never
dependencies, is skipped (`build_graders=False`)."""

from __future__ import annotations

import multiprocessing
import os
import posixpath
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import msgspec

from agentv_ci.targets.config import TARGET_FILE_NAMES, find_targets_file

PARALLEL_FROM = 200  # fewer eval files than this load in this process (a pool costs ~50-150 ms)
_CHUNKS_PER_WORKER = 4


class EvalDependencies(msgspec.Struct, frozen=True):
    """One eval file and what it reads, all repo-relative POSIX paths (outside the repo: left out)."""

    path: str
    dependencies: tuple[str, ...]  # files and directories (a change below a directory counts)
    load_failed: bool = False  # error diagnostics: the run will report them


class RepoPaths:
    """Absolute paths -> repo-relative POSIX paths (None outside the repository)."""

    def __init__(self, repo_root: Path) -> None:
        self.root = str(repo_root.resolve())
        self._prefix = self.root.rstrip("/") + "/"

    def relative(self, path: str) -> str | None:
        rel = self._inside(path)
        if rel is None:
            rel = self._inside(os.path.realpath(path))  # a path through a symlinked directory
        return rel

    def _inside(self, path: str) -> str | None:
        if path == self.root:
            return ""
        if not path.startswith(self._prefix):
            return None
        rel = path[len(self._prefix) :]
        if os.sep != "/":
            rel = rel.replace(os.sep, "/")
        parts = rel.split("/")
        if "." in parts or ".." in parts or "" in parts:
            rel = posixpath.normpath(rel)
            if rel == ".":
                return ""
            if rel == ".." or rel.startswith("../"):
                return None
        return rel


class TargetsFiles:
    """The targets file that applies to each directory (`find_targets_file`), and the nearer places a
    new one would shadow it from; memoised per directory."""

    def __init__(self, explicit: Path | None = None) -> None:
        self.explicit = explicit
        self._by_dir: dict[Path, tuple[str, ...]] = {}

    def for_eval(self, eval_file: Path) -> tuple[str, ...]:
        if self.explicit is not None:
            return (str(self.explicit.absolute()),)
        directory = eval_file.parent
        found = self._by_dir.get(directory)
        if found is None:
            found = self._by_dir[directory] = self._walk(directory)
        return found

    @staticmethod
    def _walk(directory: Path) -> tuple[str, ...]:
        found = find_targets_file(directory)
        paths: list[str] = []
        if found is not None:
            found = found.absolute()
            paths.append(str(found))
            project = found.parent.parent if found.parent.name == ".agentv" else found.parent
        else:
            project = None
        for current in (directory, *directory.parents):
            for name in TARGET_FILE_NAMES:
                candidate = current / name
                if found is not None and candidate == found:
                    return tuple(paths)
                paths.append(str(candidate))
            if current == project or (current / ".git").exists():
                break
        return tuple(paths)


def _load_one(
    path: Path, repo_root: Path, env: Mapping[str, str] | None, paths: RepoPaths
) -> tuple[tuple[str, ...], bool]:
    from agentv_ci.loading.suite_loader import load_suite

    result = load_suite(path, repo_root=repo_root, env=env, build_graders=False)
    failed = result.suite is None or any(d.severity == "error" for d in result.diagnostics)
    rels = (paths.relative(d) for d in result.dependencies)
    return tuple(dict.fromkeys(r for r in rels if r is not None)), failed


def _load_chunk(
    files: list[Path], repo_root: Path, env: Mapping[str, str] | None
) -> list[tuple[tuple[str, ...], bool]]:
    paths = RepoPaths(repo_root)
    return [_load_one(path, repo_root, env, paths) for path in files]


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _pool_context() -> multiprocessing.context.BaseContext:
    # fork copies the already-imported loader (no start-up cost); only safe without other threads.
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def _load_all(
    files: list[Path], repo_root: Path, env: Mapping[str, str] | None, workers: int | None
) -> list[tuple[tuple[str, ...], bool]]:
    count = workers if workers is not None else _usable_cpus()
    if count <= 1 or len(files) < PARALLEL_FROM:
        return _load_chunk(files, repo_root, env)
    size = max(1, -(-len(files) // (count * _CHUNKS_PER_WORKER)))
    chunks = [files[i : i + size] for i in range(0, len(files), size)]
    plain_env = dict(env) if env is not None else None
    with ProcessPoolExecutor(max_workers=count, mp_context=_pool_context()) as pool:
        parts = pool.map(_load_chunk, chunks, [repo_root] * len(chunks), [plain_env] * len(chunks))
        return [item for part in parts for item in part]


def eval_dependencies(
    eval_files: Sequence[Path],
    *,
    repo_root: Path,
    env: Mapping[str, str] | None = None,
    targets_file: Path | None = None,
    workers: int | None = None,
) -> list[EvalDependencies]:
    """Load each eval file (absolute paths inside `repo_root`) and list what it reads: the loader's
    dependencies plus the targets file that applies (`targets_file` when one is forced)."""
    files = list(eval_files)
    paths = RepoPaths(repo_root)
    targets = TargetsFiles(targets_file)
    loaded = _load_all(files, repo_root, env, workers)
    out: list[EvalDependencies] = []
    for path, (dependencies, failed) in zip(files, loaded, strict=True):
        rel = paths.relative(str(path))
        if rel is None:
            continue
        extra = (paths.relative(t) for t in targets.for_eval(path))
        merged = tuple(dict.fromkeys((*dependencies, *(e for e in extra if e is not None))))
        out.append(EvalDependencies(rel, merged, failed))
    return out
