"""The change set of a branch: what head changed since its merge-base with base (three-dot), renames
as a delete plus an add, and optionally the uncommitted and untracked files of the work tree."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import msgspec

from agentv_ci.errors import UsageError
from agentv_ci.selection.git import commit_of, repo_toplevel, resolve_commit, run_git
from agentv_ci.selection.history import find_merge_base

Status = Literal["A", "M", "D"]
_VERBS: dict[str, str] = {"A": "added", "M": "changed", "D": "deleted"}
# Config that would change `git diff`'s output format, pinned off.
_DIFF = ("-c", "diff.relative=false", "-c", "diff.noprefix=false", "diff")
_DIFF_FLAGS = ("--name-status", "-z", "--no-renames", "--no-ext-diff", "--no-textconv")


class ChangedFile(msgspec.Struct, frozen=True):
    """One changed path, repo-relative with `/` separators."""

    path: str
    status: Status  # A added, M modified (or type changed), D deleted

    @property
    def verb(self) -> str:
        return _VERBS[self.status]


class ChangeSet(msgspec.Struct, frozen=True):
    """What `head` changed since its merge-base with `base` (and the work tree, when asked)."""

    base: str  # as given (a branch, a tag, a sha)
    head: str
    base_sha: str
    head_sha: str
    merge_base: str
    files: list[ChangedFile]
    include_uncommitted: bool = False

    def by_path(self) -> dict[str, ChangedFile]:
        return {f.path: f for f in self.files}


def parse_name_status(output: bytes) -> list[ChangedFile]:
    """`git diff --name-status -z` output -> changed files. A rename (`R`, when renames were not
    turned off) is a delete of the old path plus an add of the new one; a copy is an add."""
    tokens = output.split(b"\0")
    out: list[ChangedFile] = []
    i = 0
    while i < len(tokens) - 1:
        status = tokens[i].decode("ascii", "replace")
        if not status:
            i += 1
            continue
        kind = status[0]
        if kind in "RC":
            old, new = os.fsdecode(tokens[i + 1]), os.fsdecode(tokens[i + 2])
            if kind == "R":
                out.append(ChangedFile(old, "D"))
            out.append(ChangedFile(new, "A"))
            i += 3
            continue
        path = os.fsdecode(tokens[i + 1])
        i += 2
        if kind in "AD":
            out.append(ChangedFile(path, "A" if kind == "A" else "D"))
        elif kind in "MTU":
            out.append(ChangedFile(path, "M"))
        # X (unknown) and B (broken pair, only with -B) are not produced with these flags.
    return out


def _merge(committed: list[ChangedFile], later: list[ChangedFile]) -> list[ChangedFile]:
    """Later (work-tree) states win; a path deleted then re-created is modified."""
    files = {f.path: f for f in committed}
    for change in later:
        before = files.get(change.path)
        if before is not None and before.status == "D" and change.status == "A":
            change = ChangedFile(change.path, "M")
        files[change.path] = change
    return [files[path] for path in sorted(files)]


def changed_files(
    repo: Path, base: str, head: str = "HEAD", *, include_uncommitted: bool = False
) -> ChangeSet:
    """The files `head` changed since its merge-base with `base` (`git diff base...head`), as
    repo-relative POSIX paths. A branch name also resolves as `origin/<name>`; a shallow clone is
    deepened until the merge-base is found (`GitError`, exit 2, when it cannot be).

    `include_uncommitted` compares the work tree instead of `head` (which must then be the
    checked-out commit): modified, staged and untracked (not ignored) files count."""
    root = repo_toplevel(repo)
    base_sha = resolve_commit(root, base)
    head_sha = resolve_commit(root, head)
    merge_base = find_merge_base(root, base_sha, head_sha, names=(base, head))
    if include_uncommitted:
        if head_sha != commit_of(root, "HEAD"):
            raise UsageError(
                f"--include-uncommitted compares the work tree, but --head {head} is not checked out",
                hint="drop --head, or check out that commit first",
            )
        tracked = parse_name_status(run_git(*_DIFF, *_DIFF_FLAGS, merge_base, "--", cwd=root).stdout)
        listed = run_git("ls-files", "--others", "--exclude-standard", "-z", cwd=root).stdout
        untracked = [ChangedFile(os.fsdecode(p), "A") for p in listed.split(b"\0") if p]
        files = _merge(tracked, untracked)
    else:
        diff = run_git(*_DIFF, *_DIFF_FLAGS, merge_base, head_sha, "--", cwd=root).stdout
        files = sorted(parse_name_status(diff), key=lambda f: f.path)
    return ChangeSet(
        base=base,
        head=head,
        base_sha=base_sha,
        head_sha=head_sha,
        merge_base=merge_base,
        files=files,
        include_uncommitted=include_uncommitted,
    )
