"""The quarantine the gates trust: the base branch's `.agentv/quarantine.yaml`, never the change's.

A pull request could otherwise quarantine the very test it breaks. With a base (`--base REF`, the
base `--changed` selects against, the pull request's base in the Action) the file is read from that
commit (`git cat-file`); the work tree's copy is read only to say which of its entries have no
effect. Without a base the work tree's file is the one there is. On a GitHub pull request
(`$GITHUB_BASE_REF` set) a work-tree file is never trusted: its base is read instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime
from pathlib import Path

from agentv_ci.loading.quarantine import (
    MAX_QUARANTINE_BYTES,
    QUARANTINE_PATH,
    QuarantineEntry,
    QuarantineFile,
    quarantine_of_bytes,
    quarantine_waivers,
    read_quarantine_file,
    unreadable_quarantine,
)
from agentv_ci.model.source import SourceLocation
from agentv_ci.model.waivers import WaiverBook
from agentv_ci.security.confinement import find_repo_root
from agentv_ci.selection.git import BASE_ENV, GitError, repo_toplevel, resolve_commit, run_git

__all__ = ["trusted_quarantine"]


def trusted_quarantine(
    start: Path,
    base: str | None,
    env: Mapping[str, str],
    *,
    today: date | None = None,
) -> WaiverBook | None:
    """The waivers of the quarantine file of `start`'s repository, read from `base` when given (see
    the module doc); None when there is no quarantine file. Raises `InvalidQuarantine` (exit 2) for
    an invalid trusted file; a base git cannot read applies no quarantine (a note says so)."""
    day = today or datetime.now(UTC).date()
    root = find_repo_root(start)
    local = read_quarantine_file(root / QUARANTINE_PATH, QUARANTINE_PATH)
    if base is None:
        implicit = env.get(BASE_ENV, "").strip()
        if local is None or not implicit:
            return quarantine_waivers(local.checked(), None, today=day, base=None) if local else None
        base = implicit
    try:
        trusted = _base_copy(repo_toplevel(start), base)
    except GitError as exc:
        # Fails closed: no waiver without the trusted copy. Said only where this checkout has a
        # quarantine file: a shallow checkout of a repository that keeps none stays silent.
        if local is None:
            return None
        note = (
            f"{QUARANTINE_PATH}: not applied: the base {base} is not in this checkout ({exc.message}); "
            "fetch it (e.g. `fetch-depth: 0`) for its quarantine to apply"
        )
        return WaiverBook(notes=[note])
    if trusted is None and local is None:
        return None
    proposed = _entries_or_note(local) if local is not None else ([], None)
    book = quarantine_waivers(trusted.checked() if trusted else [], proposed[0], today=day, base=base)
    if proposed[1] is not None:
        return WaiverBook(tests=book.tests, notes=[*book.notes, proposed[1]])
    return book


def _entries_or_note(local: QuarantineFile) -> tuple[list[QuarantineEntry], str | None]:
    """The work tree's entries (only to say they have no effect): an invalid file is a note, not an
    error, since it is not the one that applies."""
    errors = [d for d in local.diagnostics if d.severity == "error"]
    if not errors:
        return local.entries, None
    first = errors[0]
    where = SourceLocation(first.file, first.line, first.col)
    return (
        local.entries,
        f"{where}: this change's quarantine file is invalid ({first.message}); it has no effect",
    )


def _base_copy(repo: Path, base: str) -> QuarantineFile | None:
    """The quarantine file as commit `base` holds it, or None when it holds none."""
    commit = resolve_commit(repo, base)
    shown = f"{base}:{QUARANTINE_PATH}"
    listed = run_git("ls-tree", "-l", commit, "--", QUARANTINE_PATH, cwd=repo).stdout.decode(
        "utf-8", "replace"
    )
    if not listed.strip():
        return None
    mode, kind, _sha, size = listed.split(None, 4)[:4]
    if kind != "blob" or mode == "120000":
        problem = "is a symlink" if mode == "120000" else "is not a file"
        return unreadable_quarantine(shown, f"{QUARANTINE_PATH} {problem} on {base}")
    if not size.isdigit() or int(size) > MAX_QUARANTINE_BYTES:
        return unreadable_quarantine(shown, f"the quarantine file is over {MAX_QUARANTINE_BYTES // 1024} KiB")
    data = run_git("cat-file", "blob", f"{commit}:{QUARANTINE_PATH}", cwd=repo).stdout
    return quarantine_of_bytes(data, shown)
