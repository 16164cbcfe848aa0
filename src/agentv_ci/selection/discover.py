"""One call from refs to a selection, as the CLI and the GitHub Action use it: find the repository,
diff base...head, and load the evals from the commit being compared (a temporary work tree when
`head` is not the checked-out commit)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from agentv_ci.errors import UsageError
from agentv_ci.selection.changes import changed_files
from agentv_ci.selection.git import BASE_ENV, commit_of, repo_toplevel
from agentv_ci.selection.graph import RepoPaths
from agentv_ci.selection.select import SelectedEval, Selection, select_changed_evals
from agentv_ci.selection.worktree import checkout_worktree


def base_ref(base: str | None, env: Mapping[str, str]) -> str:
    """`--base`, else `$GITHUB_BASE_REF`; a `UsageError` (exit 2) when neither is set."""
    chosen = base or env.get(BASE_ENV, "").strip()
    if not chosen:
        raise UsageError(
            "selecting changed evals needs a base to compare with: --base REF",
            hint=f"e.g. --base origin/main (on pull_request events ${BASE_ENV} is used when set)",
        )
    return chosen


def discover_changed_evals(
    paths: Sequence[Path],
    *,
    base: str,
    head: str = "HEAD",
    include_uncommitted: bool = False,
    env: Mapping[str, str] | None = None,
    targets_file: Path | None = None,
    checked_out_only: bool = False,
    target_names: Sequence[str] = (),
) -> Selection:
    """The evals under `paths` that `base...head` affects. Eval files are read from the work tree when
    `head` is checked out, else from a temporary work tree at `head` (refused with
    `checked_out_only`: a run executes the work tree). Every `SelectedEval.path` is in the work tree."""
    paths = list(paths) or [Path(".")]
    first = paths[0] if paths[0].exists() else Path.cwd()
    repo = repo_toplevel(first.absolute())
    changes = changed_files(repo, base, head, include_uncommitted=include_uncommitted)
    if include_uncommitted or changes.head_sha == commit_of(repo, "HEAD"):
        return select_changed_evals(
            paths, changes, repo_root=repo, env=env, targets_file=targets_file, target_names=target_names
        )
    if checked_out_only:
        raise UsageError(
            f"--head {head} is not the checked-out commit",
            hint=f"check it out first (git checkout {head}); a run executes the eval files of the work tree",
        )
    paths_in_repo = RepoPaths(repo)
    with checkout_worktree(repo, changes.head_sha) as tree:
        mapped: list[Path] = []
        for path in paths:
            rel = paths_in_repo.relative(str(path.absolute()))
            if rel is None:
                raise UsageError(f"path {path} is outside the git repository {repo}")
            mapped.append(tree / rel if rel else tree)
        forced = targets_file
        if forced is not None:
            rel = paths_in_repo.relative(str(forced.absolute()))
            forced = tree / rel if rel is not None else forced
        found = select_changed_evals(
            mapped, changes, repo_root=tree, env=env, targets_file=forced, target_names=target_names
        )
    selected = [SelectedEval(repo / e.repo_path, e.repo_path, e.reasons) for e in found.selected]
    return Selection(selected, found.removed, found.total, found.all_reason, found.changes, found.unselecting)
