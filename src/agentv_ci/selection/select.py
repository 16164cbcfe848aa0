"""Selection: the eval files a change set affects, each with the reasons it was picked, plus the eval
files the change removed."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import msgspec

from agentv_ci.errors import UsageError
from agentv_ci.loading.cases import glob_root
from agentv_ci.loading.discovery import SKIPPED_DIRS, find_eval_files, is_eval_file_name
from agentv_ci.selection.changes import ChangedFile, ChangeSet
from agentv_ci.selection.graph import EvalDependencies, RepoPaths, eval_dependencies

# Repo-root files whose change selects every eval: AgentV's project config. (targets files and `.env`
# files are not here: each applies to the evals below it, through the dependency graph.)
GLOBAL_CONFIG_FILES = (".agentv/config.yaml", ".agentv/config.yml")
GLOBAL_CONFIG_PATTERNS = ("agentv.config.*",)
MAX_REASONS = 10  # per eval; the rest are counted
_SIDECARS = (".eval.yaml", ".eval.yml", ".yaml", ".yml")


class SelectedEval(msgspec.Struct, frozen=True):
    """An eval file to run and why."""

    path: Path  # absolute: what to load
    repo_path: str  # repo-relative, `/`-separated: what to show
    reasons: list[str]


class Selection(msgspec.Struct, frozen=True):
    """The evals a change set affects. `all_reason` is set when a global config change selected all."""

    selected: list[SelectedEval]
    removed: list[str]  # repo-relative paths of eval files the change deleted
    total: int  # eval files under the paths
    all_reason: str | None
    changes: ChangeSet
    # Changed files that selected no eval (nor were a removed eval): what selection did not consider
    # relevant, listed so a reviewer sees it (sorted, repo-relative).
    unselecting: list[str] = []

    def as_summary_selection(self) -> dict[str, str]:
        """Repo-relative eval path -> its reasons, for `RunSummary.selection`."""
        return {e.repo_path: "; ".join(e.reasons) for e in self.selected}

    def to_json(self) -> dict[str, Any]:
        """The `agentv-ci discover --json` document (docs/selection.md)."""
        changes = self.changes
        return {
            "base": changes.base,
            "head": changes.head,
            "base_sha": changes.base_sha,
            "head_sha": changes.head_sha,
            "merge_base": changes.merge_base,
            "include_uncommitted": changes.include_uncommitted,
            "changed_files": len(changes.files),
            "total": self.total,
            "all_reason": self.all_reason,
            "selected": [{"path": e.repo_path, "reasons": list(e.reasons)} for e in self.selected],
            "removed": list(self.removed),
            "unselecting": list(self.unselecting),
        }


def global_config_change(changes: ChangeSet) -> ChangedFile | None:
    """The first changed file that is global config (see GLOBAL_CONFIG_FILES / _PATTERNS)."""
    for change in changes.files:
        if change.path in GLOBAL_CONFIG_FILES or (
            "/" not in change.path and any(fnmatchcase(change.path, p) for p in GLOBAL_CONFIG_PATTERNS)
        ):
            return change
    return None


def select_all_trigger(changes: ChangeSet, patterns: Sequence[str]) -> ChangedFile | None:
    """The first changed file matching one of the user's `select_all_on` globs (repo-relative; `*`
    also crosses `/`, so `src/*` is everything under `src/`): code the evals exercise that the
    dependency graph cannot see (a binary built from `src/`)."""
    for change in changes.files:
        if any(fnmatchcase(change.path, pattern.strip().lstrip("/")) for pattern in patterns):
            return change
    return None


def _scope(paths: Sequence[Path], repo: RepoPaths) -> list[str]:
    """Each path argument as a repo-relative prefix ("" = the whole repository)."""
    scope: list[str] = []
    for raw in paths:
        text = str(raw)
        magic = any(ch in text for ch in "*?[")
        path = glob_root(str(Path(text).absolute())) if magic else Path(text).absolute()
        if not magic and not path.exists():
            raise UsageError(f"path {raw} does not exist")
        rel = repo.relative(str(path))
        if rel is None:
            raise UsageError(f"path {raw} is outside the git repository {repo.root}")
        scope.append(rel)
    return scope


def _in_scope(rel: str, scope: list[str]) -> bool:
    parts = rel.split("/")
    if any(part in SKIPPED_DIRS for part in parts[:-1]):
        return False
    return any(not s or rel == s or rel.startswith(s + "/") for s in scope)


def _removed(changes: ChangeSet, scope: list[str], repo_root: Path, present: set[str]) -> list[str]:
    """Deleted eval files under the paths: eval-file names, and JSONL datasets whose sidecar was
    deleted with them (or is left behind as a plain YAML file)."""
    deleted = {f.path for f in changes.files if f.status == "D"}
    removed: list[str] = []
    for rel in sorted(deleted - present):
        if not _in_scope(rel, scope):
            continue
        name = rel.rsplit("/", 1)[-1]
        if is_eval_file_name(name):
            removed.append(rel)
        elif name.endswith(".jsonl"):
            stem = rel[: -len(".jsonl")]
            sidecars = [stem + suffix for suffix in _SIDECARS]
            if any(s in deleted for s in sidecars) or any(
                (repo_root / s).is_file() and not is_eval_file_name(s.rsplit("/", 1)[-1]) for s in sidecars
            ):
                removed.append(rel)
    return removed


class _Reasons:
    """Reasons per eval, at most one per changed path, capped at MAX_REASONS."""

    def __init__(self) -> None:
        self.by_eval: dict[int, dict[str, str]] = {}

    def add(self, index: int, changed: str, reason: str) -> None:
        self.by_eval.setdefault(index, {}).setdefault(changed, reason)

    def listed(self, index: int) -> list[str]:
        reasons = list(self.by_eval[index].values())
        if len(reasons) > MAX_REASONS:
            extra = len(reasons) - MAX_REASONS + 1
            reasons = [*reasons[: MAX_REASONS - 1], f"and {extra} more changed file(s)"]
        return reasons


def _not_code(path: str) -> bool:
    """An eval file or a committed baseline sidecar: what a target keyed on the whole repository (a
    command naming no file of it, `target_deps`) does not run. Each eval watches its own."""
    name = path.rsplit("/", 1)[-1]
    return is_eval_file_name(name) or name.endswith(".baseline.jsonl")


def _match(graph: list[EvalDependencies], changes: ChangeSet) -> _Reasons:
    watchers: dict[str, list[int]] = {}
    for index, node in enumerate(graph):
        for dependency in node.dependencies:
            if dependency != node.path:
                watchers.setdefault(dependency, []).append(index)
    # Every path read, sorted: a changed submodule (a gitlink: one changed path) selects the evals
    # reading anything below it.
    own = {node.path: index for index, node in enumerate(graph)}
    below = sorted({*watchers, *own})
    roles = {index: dict(node.roles) for index, node in enumerate(graph) if node.roles}
    reasons = _Reasons()
    for change in changes.files:
        if change.path in own:
            reasons.add(own[change.path], change.path, f"eval file {change.verb}")
    for change in changes.files:
        for index in watchers.get(change.path, ()):
            reasons.add(index, change.path, f"{change.path} {change.verb}")
        directory = change.path
        while directory:
            directory = directory.rsplit("/", 1)[0] if "/" in directory else ""
            if not directory and _not_code(change.path):
                break
            for index in watchers.get(directory, ()):
                where = f"{directory}/" if directory else "the repository root"
                why = roles.get(index, {}).get(directory)
                where = f"{where}, {why}" if why else where
                reasons.add(index, change.path, f"{change.path} {change.verb} (under {where})")
        prefix = change.path + "/"
        for read in _starting_with(below, prefix):
            readers = [*watchers.get(read, ()), *([own[read]] if read in own else ())]
            for index in readers:
                reasons.add(index, change.path, f"submodule {change.path} {change.verb} ({read} is in it)")
    return reasons


def _starting_with(paths: list[str], prefix: str) -> list[str]:
    start = bisect_left(paths, prefix)
    end = start
    while end < len(paths) and paths[end].startswith(prefix):
        end += 1
    return paths[start:end]


def select_changed_evals(
    paths: Sequence[Path],
    changes: ChangeSet,
    *,
    repo_root: Path,
    env: Mapping[str, str] | None = None,
    targets_file: Path | None = None,
    workers: int | None = None,
    select_all_on: Sequence[str] = (),
    target_names: Sequence[str] = (),
) -> Selection:
    """The eval files under `paths` (files, directories or globs, as `run` takes them) that `changes`
    affect: the eval file itself changed, or one of its dependencies (a file it reads, or a file below
    a directory it reads, the code of a target it runs on, a submodule holding a file it reads), or
    global config (then all). The evals are loaded from `repo_root`'s work tree, which must hold
    `changes.head`. `targets_file` is a forced `--targets` file and `target_names` the `--target`
    names that replace the evals' own; a changed file matching a `select_all_on` glob selects every
    eval too. `Selection.unselecting` lists the changed files that selected nothing."""
    repo = RepoPaths(repo_root)
    scope = _scope(paths, repo)
    eval_files = find_eval_files(list(paths))
    rels = [repo.relative(str(p)) for p in eval_files]
    evals = [(p, r) for p, r in zip(eval_files, rels, strict=True) if r is not None]
    present = {r for _, r in evals}
    removed = _removed(changes, scope, repo_root, present)
    trigger = global_config_change(changes)
    user_trigger = select_all_trigger(changes, select_all_on) if trigger is None else None
    if trigger is not None or user_trigger is not None:
        if trigger is not None:
            reason = f"global config {trigger.path} {trigger.verb}: all evals selected"
        else:
            assert user_trigger is not None
            reason = f"{user_trigger.path} {user_trigger.verb} (select_all_on): all evals selected"
        selected = [SelectedEval(p, r, [reason]) for p, r in evals]
        return Selection(selected, removed, len(evals), reason, changes)
    if not changes.files:
        return Selection([], removed, len(evals), None, changes)
    graph = eval_dependencies(
        [p for p, _ in evals],
        repo_root=repo_root,
        env=env,
        targets_file=targets_file,
        workers=workers,
        target_names=target_names,
    )
    reasons = _match(graph, changes)
    used = {changed for by_path in reasons.by_eval.values() for changed in by_path}
    unselecting = sorted(f.path for f in changes.files if f.path not in used and f.path not in removed)
    by_rel = dict((r, p) for p, r in evals)
    selected = [
        SelectedEval(by_rel[graph[i].path], graph[i].path, reasons.listed(i)) for i in sorted(reasons.by_eval)
    ]
    selected.sort(key=lambda e: e.repo_path)
    return Selection(selected, removed, len(evals), None, changes, unselecting)
