"""The Action's change-based selection: on a pull request with `changed_only`, the evals the PR's
changes can affect (docs/selection.md), what it says about them in the log, and the note shown
when none is affected. Changed files that selected no eval are listed in the log, the note and the
reports (`RunSummary.unselecting`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentv_ci.action.log import ActionLog
from agentv_ci.action.paths import relative_to
from agentv_ci.github.event import WorkflowRun
from agentv_ci.github.inputs import ActionInputs
from agentv_ci.text_safety import printable


@dataclass
class PrSelection:
    paths: list[Path]  # eval files to run
    reasons: dict[str, str] = field(default_factory=dict)  # repo path -> why it runs
    note: str | None = None  # nothing is affected: say so instead of running
    merge_base: str | None = None
    unselecting: list[str] = field(default_factory=list)  # changed files that selected no eval


def eval_paths(inputs: ActionInputs, workspace: Path) -> list[Path]:
    """The `paths` input (relative ones inside `workspace`)."""
    return [workspace / p if not Path(p).is_absolute() else Path(p) for p in inputs.paths]


def targets_file_of(inputs: ActionInputs, workspace: Path) -> Path | None:
    """The `targets_file` input (a relative one inside `workspace`), or None."""
    if not inputs.targets_file:
        return None
    path = Path(inputs.targets_file)
    return path if path.is_absolute() else workspace / path


def base_of(inputs: ActionInputs, run: WorkflowRun) -> str:
    """The ref changes are counted from: `base_ref`, else the pull request's base commit, else ""."""
    return inputs.base_ref or (run.pull_request.base_sha if run.pull_request else "")


def select_evals(
    inputs: ActionInputs, run: WorkflowRun, workspace: Path, env: Mapping[str, str], log: ActionLog
) -> PrSelection:
    """The evals one step runs: on pull requests with `changed_only` (or with `base_ref`), those the
    changes can affect; elsewhere every eval under `paths`."""
    paths = eval_paths(inputs, workspace)
    base = base_of(inputs, run)
    if not (inputs.changed_only and base and (run.is_pull_request or inputs.base_ref)):
        return PrSelection(paths)
    return select_changed(
        paths,
        base=base,
        workspace=workspace,
        env=env,
        targets_file=targets_file_of(inputs, workspace),
        select_all_on=inputs.select_all_on,
        target_names=tuple(inputs.target),
        echo=log.echo,
        notice=log.notice,
    )


def merge_base_of(inputs: ActionInputs, run: WorkflowRun, workspace: Path) -> str | None:
    """The merge-base of HEAD and the base (None when there is no base)."""
    base = base_of(inputs, run)
    if not base:
        return None
    # lazy: git change selection loaded only when `merge_base_of` runs
    from agentv_ci.selection import changed_files

    return changed_files(workspace, base, "HEAD").merge_base


def select_changed(
    paths: list[Path],
    *,
    base: str,
    workspace: Path,
    env: Mapping[str, str],
    targets_file: Path | None,
    select_all_on: Sequence[str],
    target_names: Sequence[str],
    echo: Callable[[str], None],
    notice: Callable[[str], None],
) -> PrSelection:
    # lazy: git change selection loaded only when `select_changed` runs
    from agentv_ci.selection import changed_files, select_changed_evals
    from agentv_ci.selection.render import selected_line, unselecting_lines, unselecting_sentence

    changes = changed_files(workspace, base, "HEAD")
    selection = select_changed_evals(
        paths,
        changes,
        repo_root=workspace,
        env=env,
        targets_file=targets_file,
        select_all_on=select_all_on,
        target_names=target_names,
    )
    for removed in selection.removed:
        notice(f"eval removed by this change: {printable(removed)}")
    for line in unselecting_lines(selection):
        echo(line)
    found = PrSelection([], merge_base=changes.merge_base, unselecting=list(selection.unselecting))
    if not selection.selected:
        found.note = (
            f"No eval is affected by the changes since {changes.merge_base[:12]} "
            f"({len(changes.files)} changed file(s), {selection.total} eval file(s) checked)."
        ) + unselecting_sentence(selection.unselecting)
        return found
    echo(f"selected {len(selection.selected)} of {selection.total} eval file(s):")
    for chosen in selection.selected:
        echo(selected_line(relative_to(chosen.path, workspace), chosen.reasons))
    found.paths = [s.path for s in selection.selected]
    found.reasons = selection.as_summary_selection()
    return found
