"""One merge-request note per job and eval set, edited in place on each push.

The body is the GitHub comment's (reporting/markdown.py: verdict, suites, Δ vs the named baseline,
the worst tests with expected vs actual in `<details>`, why these evals ran, cost): GitLab Flavored
Markdown renders the same tables, `<details>`/`<summary>` and hidden HTML comments. It links the
pipeline and ends with the hidden marker (github/comment.py's, keyed by `gitlab/<job>`).

The note to edit is the newest one carrying the marker *and* written by the token's own user
(`GET /user`'s `id`); a note by anyone else quoting the marker is never edited, and system notes are
skipped. The budget is GitHub's (60,000 UTF-8 bytes, far under GitLab's 1,000,000-character limit),
so a note and a comment of the same run carry the same details. A POST that fails after it may have
landed is not repeated blindly: the notes are listed again first, so there is never a second note.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentv_ci.gating import GateDecision
from agentv_ci.github.api import GitHubApiError
from agentv_ci.github.comment import GITHUB_BODY_LIMIT, render_comment, render_note_comment
from agentv_ci.model.result import RunSummary
from agentv_ci.platforms.gitlab.client import GitLabClient

__all__ = ["NoteOutcome", "render_mr_note", "upsert_note"]

FULL_REPORT = "the pipeline's job log or the results artifact"


@dataclass(frozen=True)
class NoteOutcome:
    action: Literal["created", "updated", "skipped"]
    id: int | None = None
    reason: str | None = None


def render_mr_note(
    summary: RunSummary | None,
    decision: GateDecision,
    *,
    baseline: RunSummary | None,
    repo_root: Path,
    pipeline_url: str | None,
    marker: str,
    note: str | None = None,
) -> str:
    """The note's body: the GitHub comment's, its run link naming the pipeline instead."""
    if note is not None or summary is None:
        body = render_note_comment(note or "", run_url=pipeline_url, marker=marker)
    else:
        body = render_comment(
            summary,
            decision,
            baseline=baseline,
            repo_root=repo_root,
            run_url=pipeline_url,
            marker=marker,
            limit=GITHUB_BODY_LIMIT,
        )
    # only the footer's link (the last one) is GitHub-worded; data above it is never rewritten
    head, found, tail = body.rpartition("[Workflow run](")
    if not found:
        return body
    tail = tail.replace(
        "full report in the job summary or the results artifact", f"full report in {FULL_REPORT}", 1
    )
    return f"{head}[Pipeline]({tail}"


def _user_id(client: GitLabClient) -> int:
    user = client.get_json("/user")
    found = user.get("id") if isinstance(user, dict) else None
    if not isinstance(found, int) or isinstance(found, bool):
        raise GitHubApiError(200, "GET /user answered no id", method="GET", path="/user")
    return found


def _newest_own(client: GitLabClient, listing: str, marker: str, me: int) -> int | None:
    newest: tuple[str, int] | None = None
    for note in client.paginate(listing, params={"sort": "asc", "order_by": "created_at"}):
        if not isinstance(note, dict) or note.get("system") is True:
            continue
        if marker not in str(note.get("body") or ""):
            continue
        author = note.get("author")
        if not isinstance(author, dict) or author.get("id") != me:
            continue  # someone quoting the marker: never edited
        raw_id = note.get("id")
        if not isinstance(raw_id, int) or isinstance(raw_id, bool) or raw_id <= 0:
            continue
        key = (str(note.get("created_at") or ""), raw_id)
        if newest is None or key > newest:
            newest = key
    return newest[1] if newest is not None else None


def _id_of(answer: Any, known: int | None) -> int | None:
    raw = answer.get("id") if isinstance(answer, dict) else None
    return raw if isinstance(raw, int) and not isinstance(raw, bool) else known


def upsert_note(
    client: GitLabClient, mr_iid: int, body: str, marker: str, *, create: bool = True
) -> NoteOutcome:
    """Edit our newest note carrying `marker` on MR `mr_iid`, or create one (`create` False: skip
    when there is none). Raises `GitHubApiError` when the API fails."""
    me = _user_id(client)
    listing = f"{client.repo_path}/merge_requests/{int(mr_iid)}/notes"
    existing = _newest_own(client, listing, marker, me)
    if existing is not None:
        client.put_json(f"{listing}/{existing}", {"body": body})
        return NoteOutcome("updated", existing)
    if not create:
        return NoteOutcome("skipped", reason="MR note not written: no earlier note to update")
    for attempt in range(client.retry.max_retries + 1):
        try:
            created = client.post_json(listing, {"body": body})
        except GitHubApiError as exc:
            if not (exc.status is None or exc.status >= 500) or attempt == client.retry.max_retries:
                raise
            landed = _newest_own(client, listing, marker, me)
            if landed is not None:
                client.put_json(f"{listing}/{landed}", {"body": body})
                return NoteOutcome("created", landed)
            continue
        return NoteOutcome("created", _id_of(created, None))
    raise AssertionError("unreachable")  # pragma: no cover
