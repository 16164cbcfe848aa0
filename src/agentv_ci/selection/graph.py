"""The dependency graph: each eval file -> every file and directory it reads, as recorded by the same
loader that runs it (`load_suite`, `LoadResult.dependencies`), plus the targets file that applies,
the code of the targets it runs on (`target_deps`) and its committed baseline sidecar
(`<eval>.baseline.jsonl`).

Thousands of eval files load in parallel processes; grader building, which adds diagnostics but never
dependencies, is skipped (`build_graders=False`)."""

from __future__ import annotations

import multiprocessing
import os
import posixpath
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import msgspec

from agentv_ci.loading.command_paths import remembered
from agentv_ci.results.sidecars import sidecar_path
from agentv_ci.selection.target_deps import TargetDependencies
from agentv_ci.targets.config import TARGET_FILE_NAMES, find_targets_file

PARALLEL_FROM = 200  # fewer eval files than this load in this process (a pool costs ~50-150 ms)
_CHUNKS_PER_WORKER = 4


class EvalDependencies(msgspec.Struct, frozen=True):
    """One eval file and what it reads, all repo-relative POSIX paths (outside the repo: left out)."""

    path: str
    dependencies: tuple[str, ...]  # files and directories (a change below a directory counts)
    load_failed: bool = False  # error diagnostics: the run will report them
    # Why a directory of a target's code counts (its working directory, script directory, `sources:`)
    roles: tuple[tuple[str, str], ...] = ()


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
    """For each directory: the targets file that applies (as `find_targets_file` finds it: the first of
    TARGET_FILE_NAMES in the directory or a parent, up to the repo root, else in the cwd) and every
    nearer place a new one would shadow it from, repo-relative. Memoised per directory, so a tree of
    thousands of eval directories costs four `stat`s per directory."""

    def __init__(self, paths: RepoPaths, explicit: Path | None = None) -> None:
        self.paths = paths
        self.explicit = explicit
        self._memo: dict[Path, tuple[str, ...]] = {}

    def for_eval(self, eval_file: Path) -> tuple[str, ...]:
        if self.explicit is not None:
            forced = self.paths.relative(str(self.explicit.absolute()))
            return (forced,) if forced is not None else ()
        return self._lookup(eval_file.parent)

    def applying(self, places: tuple[str, ...]) -> Path | None:
        """The targets file that applies, from `for_eval`'s places (the last one, when it exists)."""
        if self.explicit is not None:
            return self.explicit if self.explicit.is_file() else None
        if not places:
            return None
        last = Path(self.paths.root) / places[-1]
        return last if last.is_file() else None

    def _lookup(self, directory: Path) -> tuple[str, ...]:
        known = self._memo.get(directory)
        if known is not None:
            return known
        own: list[str] = []
        result: tuple[str, ...] | None = None
        for name in TARGET_FILE_NAMES:
            candidate = directory / name
            rel = self.paths.relative(str(candidate))
            if rel is not None:
                own.append(rel)
            if candidate.is_file():
                result = tuple(own)
                break
        if result is None:
            if (directory / ".git").exists() or directory.parent == directory:
                # The top of the walk: what find_targets_file falls back to (the cwd's), if anything.
                fallback = find_targets_file(directory)
                rel = self.paths.relative(str(fallback.absolute())) if fallback is not None else None
                result = (*own, rel) if rel is not None and rel not in own else tuple(own)
            else:
                result = (*own, *self._lookup(directory.parent))
        self._memo[directory] = result
        return result


def _load_one(
    path: Path,
    repo_root: Path,
    env: Mapping[str, str],
    paths: RepoPaths,
    targets: TargetsFiles,
    code: TargetDependencies,
) -> EvalDependencies | None:
    # lazy: the suite loader (YAML, msgspec) loaded only when `_load_one` runs
    from agentv_ci.loading.suite_loader import load_suite

    rel = paths.relative(str(path))
    if rel is None:
        return None
    result = load_suite(path, repo_root=repo_root, env=env, build_graders=False)
    failed = result.suite is None or any(d.severity == "error" for d in result.diagnostics)
    places = targets.for_eval(path)
    applying = targets.applying(places)
    of_targets = code.for_suite(path, result.suite, applying) if result.suite else {}
    read = [*result.dependencies, *of_targets]
    read.append(str(sidecar_path(path)))  # its committed baseline: a re-baseline is checked against the code
    rels = (paths.relative(d) for d in read)
    found = (r for r in rels if r is not None)
    roles = ((paths.relative(d), why) for d, why in of_targets.items() if why)
    return EvalDependencies(
        rel,
        tuple(dict.fromkeys((*found, *places))),
        failed,
        tuple((d, why) for d, why in roles if d is not None),
    )


def _load_chunk(
    files: list[Path],
    repo_root: Path,
    env: Mapping[str, str],
    targets_file: Path | None,
    target_names: tuple[str, ...] = (),
) -> list[EvalDependencies | None]:
    paths = RepoPaths(repo_root)
    targets = TargetsFiles(paths, targets_file)
    code = TargetDependencies(repo_root, env, targets_file, target_names)
    with remembered():  # grader commands shared by many eval files are resolved once
        return [_load_one(path, repo_root, env, paths, targets, code) for path in files]


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
    files: list[Path],
    repo_root: Path,
    env: Mapping[str, str],
    targets_file: Path | None,
    workers: int | None,
    target_names: tuple[str, ...] = (),
) -> list[EvalDependencies | None]:
    count = workers if workers is not None else _usable_cpus()
    if count <= 1 or len(files) < PARALLEL_FROM:
        return _load_chunk(files, repo_root, env, targets_file, target_names)
    # Contiguous chunks of the sorted list: neighbours share directories (and the targets memo).
    size = max(1, -(-len(files) // (count * _CHUNKS_PER_WORKER)))
    chunks = [files[i : i + size] for i in range(0, len(files), size)]
    n = len(chunks)
    try:
        with ProcessPoolExecutor(max_workers=count, mp_context=_pool_context()) as pool:
            parts = pool.map(
                _load_chunk, chunks, [repo_root] * n, [env] * n, [targets_file] * n, [target_names] * n
            )
            return [item for part in parts for item in part]
    except (BrokenProcessPool, OSError):
        # No worker processes here (a sandbox without semaphores, a worker killed): the slow way.
        return _load_chunk(files, repo_root, env, targets_file, target_names)


def eval_dependencies(
    eval_files: Sequence[Path],
    *,
    repo_root: Path,
    env: Mapping[str, str] | None = None,
    targets_file: Path | None = None,
    workers: int | None = None,
    target_names: Sequence[str] = (),
) -> list[EvalDependencies]:
    """Load each eval file (absolute paths inside `repo_root`; others are left out) and list what it
    reads: the loader's dependencies, the targets file that applies (`targets_file` when one is
    forced) and the code of the targets it runs on (`target_deps`; `target_names`: the `--target`
    names that replace the eval's own). Large sets load in `workers` processes (default: one per
    usable CPU)."""
    # One plain copy of the environment: os.environ decodes every key on each read.
    plain_env = dict(os.environ if env is None else env)
    loaded = _load_all(list(eval_files), repo_root, plain_env, targets_file, workers, tuple(target_names))
    return [node for node in loaded if node is not None]
