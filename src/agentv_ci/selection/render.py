"""A selection as the text `agentv-ci discover` and `run --changed` print."""

from __future__ import annotations

from agentv_ci.selection.select import Selection
from agentv_ci.text_safety import printable


def compared(selection: Selection) -> str:
    """`BASE and HEAD (merge-base abc1234, N changed files)`."""
    changes = selection.changes
    head = f"{changes.head} and the work tree" if changes.include_uncommitted else changes.head
    count = len(changes.files)
    return (
        f"{printable(changes.base)} and {printable(head)} (merge-base {changes.merge_base[:12]}, "
        f"{count} changed file{'' if count == 1 else 's'})"
    )


def headline(selection: Selection) -> str:
    """One line: how many evals of how many were selected, or that none is affected."""
    if not selection.selected:
        return f"no eval is affected by the changes between {compared(selection)}"
    return (
        f"{len(selection.selected)} of {selection.total} eval(s) affected by the changes between "
        f"{compared(selection)}"
    )


def render_selection(selection: Selection) -> str:
    """The headline, each selected eval (repo-relative) with its reasons, then the removed evals.
    Paths and reasons are data (a file name may hold a line feed): each is printed on one line."""
    lines = [headline(selection)]
    if selection.all_reason is not None:
        lines.append(printable(selection.all_reason))
        lines += [printable(picked.repo_path) for picked in selection.selected]
    else:
        for picked in selection.selected:
            lines.append(printable(picked.repo_path))
            lines += [f"  - {printable(reason)}" for reason in picked.reasons]
    lines += [f"removed: {printable(path)}" for path in selection.removed]
    lines += unselecting_lines(selection)
    return "\n".join(lines)


def selected_line(repo_path: str, reasons: list[str]) -> str:
    """`  PATH: REASON; REASON` for one selected eval (`run --changed`, the Action), on one line."""
    return f"  {printable(repo_path)}: {'; '.join(printable(r) for r in reasons)}"


MAX_UNSELECTING = 50  # listed in the text output; `--json` has them all


def unselecting_lines(selection: Selection, limit: int = MAX_UNSELECTING) -> list[str]:
    """`changed, selected no eval: PATH` for each changed file selection did not consider relevant."""
    paths = selection.unselecting
    lines = [f"changed, selected no eval: {printable(path)}" for path in paths[:limit]]
    if len(paths) > limit:
        lines.append(f"changed, selected no eval: ... and {len(paths) - limit} more")
    return lines


def unselecting_sentence(paths: list[str], limit: int = 20) -> str:
    """` Changed files that selected no eval: a, b (+N more).` (empty when there are none)."""
    if not paths:
        return ""
    more = f" (+{len(paths) - limit} more)" if len(paths) > limit else ""
    return f" Changed files that selected no eval: {', '.join(printable(p) for p in paths[:limit])}{more}."
