"""The Action's change-based selection: on a pull request with `changed_only`, the evals the PR's
changes can affect (docs/selection.md), what it says about them in the log, and the note shown
when none is affected. Changed files that selected no eval are listed in the log, the note and the
reports (`RunSummary.unselecting`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class PrSelection:
    paths: list[Path]  # eval files to run
    reasons: dict[str, str] = field(default_factory=dict)  # repo path -> why it runs
    note: str | None = None  # nothing is affected: say so instead of running
    merge_base: str | None = None
    unselecting: list[str] = field(default_factory=list)  # changed files that selected no eval


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
    from agentv_ci.selection import changed_files, select_changed_evals
    from agentv_ci.selection.render import selected_line, unselecting_lines, unselecting_sentence
    from agentv_ci.text_safety import printable

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
        echo(selected_line(_relative(chosen.path, workspace), chosen.reasons))
    found.paths = [s.path for s in selection.selected]
    found.reasons = selection.as_summary_selection()
    return found


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)
