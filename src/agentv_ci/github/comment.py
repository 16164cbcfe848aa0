"""One sticky PR comment per workflow and eval set: its marker, its body, and the upsert.

The comment ends with a hidden marker (`<!-- agentv-ci:sticky-comment key=... -->`). Each run lists
every page of the PR's comments, takes the newest one that carries the marker *and* was written by
the token's own identity, and edits it; otherwise it creates one. A comment by anyone else quoting
the marker is never edited.

The identity is `GET /user`'s login for a personal token. An Actions `GITHUB_TOKEN` (an installation
token) is refused there with 403 "Resource not accessible by integration"; its comments are written
by `github-actions[bot]`, which is then the identity. A GitHub App's own installation token writes
as `<app-slug>[bot]`: pass it as `author`.

`post_sticky_comment` is what the Action calls: it never raises and never changes the verdict. On a
fork PR, without a token, or when the API still fails after retries, it returns a "skipped" outcome
with a reason for the log.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentv_ci.gating import GateDecision
from agentv_ci.github.api import DEFAULT_API_URL, GitHubApiError, GitHubClient, RetryPolicy
from agentv_ci.model.result import RunSummary
from agentv_ci.reporting.markdown import comparison_for, render_markdown, utf8_size
from agentv_ci.security.redaction import redact
from agentv_ci.text_safety import escape_markdown_inline

__all__ = [
    "ACTIONS_BOT",
    "GITHUB_BODY_LIMIT",
    "CommentOutcome",
    "comment_marker",
    "fork_repository",
    "marker_key",
    "post_sticky_comment",
    "pull_request_number",
    "render_comment",
    "render_note_comment",
    "token_identity",
    "upsert_comment",
]

GITHUB_BODY_LIMIT = 65_536  # GitHub answers 422 "Body is too long" past this many characters
ACTIONS_BOT = "github-actions[bot]"
FULL_REPORT = "the job summary or the results artifact"
_MARKER_PREFIX = "<!-- agentv-ci:sticky-comment key="
_KEY_UNSAFE = re.compile(r"[^A-Za-z0-9_./:=+-]+")
_RUN_URL = re.compile(r"https?://[^\s()<>\[\]`\"'\\]+")
_NOT_BY_INTEGRATION = "not accessible by integration"
_FORK_SAFE_EVENTS = frozenset({"pull_request_target", "workflow_run"})  # they run with the base's token

CommentAction = Literal["created", "updated", "skipped"]


@dataclass(frozen=True)
class CommentOutcome:
    """What happened to the PR comment: `action`, its `url` and `id`, or why it was `skipped`."""

    action: CommentAction
    url: str | None = None
    id: int | None = None
    reason: str | None = None


# -- the marker ------------------------------------------------------------------------------------


def marker_key(workflow: str, eval_set: Sequence[str]) -> str:
    """`<workflow slug>/<hash>`: the same workflow and eval set (order and duplicates aside) give
    the same key, so each pair keeps its own comment."""
    paths = sorted({p.strip().replace("\\", "/") for p in eval_set if p.strip()})
    text = "\0".join([workflow, *paths])
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    slug = re.sub(r"[^A-Za-z0-9_.]+", "-", workflow).strip("-")[:40] or "workflow"
    return f"{slug}/{digest}"


def comment_marker(key: str) -> str:
    """The hidden HTML marker for `key`. The key is reduced to a safe alphabet with no `--`, so no
    key can close the HTML comment early or inject markup."""
    safe = _KEY_UNSAFE.sub("_", key)
    safe = re.sub(r"-{2,}", "-", safe).strip("-")[:120] or "default"
    return f"{_MARKER_PREFIX}{safe} -->"


# -- the body --------------------------------------------------------------------------------------


def render_comment(
    summary: RunSummary,
    decision: GateDecision,
    *,
    baseline: RunSummary | None,
    repo_root: Path | None,
    run_url: str | None,
    marker: str,
    limit: int = GITHUB_BODY_LIMIT,
    selection: dict[str, str] | None = None,
    html_report_url: str | None = None,
) -> str:
    """The comment body: the Markdown summary (verdict, per-suite table with Δ vs baseline, gate
    reasons, changes with regressions first, selection, collapsed details of the worst tests), a
    link to the run, and the marker alone on the last line.

    `limit` is GitHub's cap; the body keeps a margin below it (60,000 at the default) measured in
    UTF-8 bytes, which is never less than the code points or UTF-16 units GitHub may count. Details
    are cut first, with a note pointing at the job summary / artifact; the verdict, the table, the
    link and the marker always stay. `html_report_url` (the run's artifacts, where a later step
    uploaded the HTML report) adds a link to it next to the run's.
    """
    budget = min(limit - 256, limit * 60_000 // GITHUB_BODY_LIMIT)
    link = "\n\n".join(part for part in (_html_link(html_report_url), _run_link(run_url)) if part)
    footer = (link + "\n\n" if link else "") + marker
    room = budget - utf8_size(footer) - 2
    markdown = render_markdown(
        summary,
        decision,
        comparison=comparison_for(summary, decision, baseline),
        selection=selection,
        repo_root=repo_root,
        limit=room,
        size=utf8_size,
        full_report=FULL_REPORT,
    )
    body = markdown.rstrip("\n") + "\n\n" + footer
    if utf8_size(body) > budget:  # render_markdown keeps its promise; this is a last line of defence
        first = markdown.split("\n", 1)[0][:1000]
        body = f"{first}\n\nThe full report did not fit in a comment: see {FULL_REPORT}.\n\n{footer}"
    return body


def render_note_comment(note: str, *, run_url: str | None, marker: str) -> str:
    """A comment that carries one sentence instead of results (e.g. no eval is affected by the PR).
    It replaces an earlier results comment, so a stale verdict never stays on the PR."""

    link = _run_link(run_url)
    parts = ["### agentv-ci", escape_markdown_inline(note[:2000]), *([link] if link else []), marker]
    return "\n\n".join(parts)


def _html_link(url: str | None) -> str:
    if not url or len(url) > 500 or not _RUN_URL.fullmatch(url):
        return ""
    return (
        f"[HTML report]({url}): `report.html` in this run's artifacts, every test with what each failed "
        "check expected and what came back."
    )


def _run_link(run_url: str | None) -> str:
    if not run_url or len(run_url) > 500 or not _RUN_URL.fullmatch(run_url):
        return ""
    return f"[Workflow run]({run_url}): full report in {FULL_REPORT}."


# -- the API side ----------------------------------------------------------------------------------


def token_identity(client: GitHubClient) -> str:
    """The login the token writes comments as (see the module docstring)."""
    try:
        user = client.get_json("/user")
    except GitHubApiError as exc:
        if exc.status == 403 and _NOT_BY_INTEGRATION in exc.message.lower():
            return ACTIONS_BOT
        raise
    login = user.get("login") if isinstance(user, dict) else None
    if not isinstance(login, str) or not login:
        raise GitHubApiError(200, "GET /user answered no login", method="GET", path="/user")
    return login


def upsert_comment(
    client: GitHubClient,
    pr_number: int,
    body: str,
    marker: str,
    *,
    author: str | None = None,
    create: bool = True,
) -> CommentOutcome:
    """Edit our newest comment carrying `marker` on PR `pr_number`, or create one (with `create`
    False: skip, when there is none to edit).

    `author` overrides the token's identity. Raises `GitHubApiError` when the API fails.
    """
    me = (author or token_identity(client)).lower()
    listing = f"{client.repo_path}/issues/{int(pr_number)}/comments"
    existing = _newest_own(client, listing, marker, me)
    if existing is not None:
        edited = client.patch_json(f"{client.repo_path}/issues/comments/{existing}", {"body": body})
        return _outcome("updated", edited, existing)
    if not create:
        return CommentOutcome("skipped", reason="PR comment not written: no earlier comment to update")
    return _create(client, listing, body=body, marker=marker, me=me)


def _newest_own(client: GitHubClient, listing: str, marker: str, me: str) -> int | None:
    newest: tuple[str, int] | None = None
    for comment in client.paginate(listing):
        if not isinstance(comment, dict) or marker not in str(comment.get("body") or ""):
            continue
        user = comment.get("user")
        login = user.get("login") if isinstance(user, dict) else None
        if not isinstance(login, str) or login.lower() != me:
            continue  # someone quoting the marker: never edited
        key = (str(comment.get("created_at") or ""), int(comment.get("id") or 0))
        if newest is None or key > newest:
            newest = key
    return newest[1] if newest is not None and newest[1] else None


def _create(client: GitHubClient, listing: str, *, body: str, marker: str, me: str) -> CommentOutcome:
    """POST is not retried blindly: after a 5xx or a lost answer the comment may exist already, so
    the listing is read again first (a second comment would defeat the sticky comment)."""
    for attempt in range(client.retry.max_retries + 1):
        try:
            created = client.post_json(listing, {"body": body})
        except GitHubApiError as exc:
            retryable = exc.status is None or exc.status >= 500
            if not retryable or attempt == client.retry.max_retries:
                raise
            landed = _newest_own(client, listing, marker, me)
            if landed is not None:
                edited = client.patch_json(f"{client.repo_path}/issues/comments/{landed}", {"body": body})
                return _outcome("created", edited, landed)
            continue
        return _outcome("created", created, None)
    raise AssertionError("unreachable")  # pragma: no cover


def _outcome(action: CommentAction, answer: Any, known_id: int | None) -> CommentOutcome:
    data = answer if isinstance(answer, dict) else {}
    raw_id = data.get("id", known_id)
    url = data.get("html_url")
    return CommentOutcome(
        action, url=url if isinstance(url, str) else None, id=raw_id if isinstance(raw_id, int) else known_id
    )


# -- the Action's entry point ----------------------------------------------------------------------


def pull_request_number(event: Mapping[str, Any] | None) -> int | None:
    """The PR number of a `pull_request`/`pull_request_target` (or PR `issue_comment`) event."""
    if not event:
        return None
    pull = event.get("pull_request")
    if isinstance(pull, dict) and isinstance(pull.get("number"), int):
        return int(pull["number"])
    issue = event.get("issue")
    if isinstance(issue, dict) and issue.get("pull_request") and isinstance(issue.get("number"), int):
        return int(issue["number"])
    return None


def fork_repository(event: Mapping[str, Any] | None, repository: str) -> str | None:
    """The head repository's `full_name` when the PR comes from a fork (`"(deleted fork)"` when the
    fork is gone), else None."""
    pull = event.get("pull_request") if event else None
    if not isinstance(pull, dict):
        return None
    base = event.get("repository") if event else None
    base_name = base.get("full_name") if isinstance(base, dict) else None
    own = str(base_name or repository)
    head = pull.get("head")
    repo = head.get("repo") if isinstance(head, dict) else None
    if not isinstance(repo, dict):
        return "(deleted fork)"
    name = str(repo.get("full_name") or "")
    return None if name.lower() == own.lower() else name


def post_sticky_comment(
    *,
    token: str | None,
    repository: str,
    body: str,
    marker: str,
    event: Mapping[str, Any] | None = None,
    event_name: str | None = None,
    pr_number: int | None = None,
    api_url: str = DEFAULT_API_URL,
    author: str | None = None,
    retry: RetryPolicy | None = None,
    sleep: Callable[[float], None] = time.sleep,
    create: bool = True,
) -> CommentOutcome:
    """Create or update the sticky comment (`create` False: only update one); never raises. A
    "skipped" outcome carries the reason (fork PR, no token, not a PR, API failure after retries, no
    comment to update) for the log.

    `pr_number` overrides the event's (e.g. a `workflow_run` that looked the PR up). On
    `pull_request` a fork's token is read-only, so fork PRs are skipped without a call; on
    `pull_request_target` and `workflow_run` the token is the base repository's and they are not.
    """
    body = redact(body)  # the comment is public: no secret the run knows goes into it
    target = CommentTarget(
        token=token,
        repository=repository,
        event=event,
        event_name=event_name,
        pr_number=pr_number,
        api_url=api_url,
        author=author,
    )
    try:
        return _post(target, body, marker, retry=retry, sleep=sleep, create=create)
    except Exception as exc:  # the comment is a convenience: nothing in it may fail the run
        reason = f"PR comment skipped: unexpected {type(exc).__name__}: {exc}"
        return CommentOutcome("skipped", reason=_redact(reason, token)[:500])


@dataclass(frozen=True)
class CommentTarget:
    """The PR a comment goes to and the identity that writes it, as `post_sticky_comment` got them."""

    token: str | None
    repository: str
    event: Mapping[str, Any] | None
    event_name: str | None
    pr_number: int | None
    api_url: str
    author: str | None


def _post(
    target: CommentTarget,
    body: str,
    marker: str,
    *,
    retry: RetryPolicy | None,
    sleep: Callable[[float], None],
    create: bool,
) -> CommentOutcome:
    """Check the target can take a comment, then upsert it."""
    number = _pr_number(target)
    if isinstance(number, CommentOutcome):
        return number
    if marker not in body:
        body = body.rstrip("\n") + "\n\n" + marker
    token = target.token or ""
    try:
        with GitHubClient(
            token, target.repository, api_url=target.api_url, retry=retry, sleep=sleep
        ) as client:
            return upsert_comment(client, number, body, marker, author=target.author, create=create)
    except GitHubApiError as exc:
        hint = ""
        if exc.status == 403:
            hint = " (the workflow needs `permissions: pull-requests: write`)"
        reason = f"PR comment skipped: {exc}{hint}"
        return CommentOutcome("skipped", reason=_redact(reason, token)[:500])
    except ValueError as exc:  # a malformed repository name
        return CommentOutcome("skipped", reason=_redact(f"PR comment skipped: {exc}", token)[:500])


def _pr_number(target: CommentTarget) -> int | CommentOutcome:
    """The PR to comment on, or the "skipped" outcome saying why there is none we may write to."""
    if not target.token:
        return CommentOutcome(
            "skipped", reason="PR comment skipped: no GitHub token (set the github_token input)"
        )
    number = target.pr_number if target.pr_number is not None else pull_request_number(target.event)
    if number is None:
        return CommentOutcome("skipped", reason="PR comment skipped: not a pull request event")
    fork = fork_repository(target.event, target.repository)
    if fork is not None and target.event_name not in _FORK_SAFE_EVENTS:
        return CommentOutcome(
            "skipped",
            reason=f"PR comment skipped: the pull request comes from a fork ({fork}) and its token "
            "is read-only; the results are in the job summary and the artifact",
        )
    return number


def _redact(text: str, token: str | None) -> str:
    return text.replace(token, "***") if token else text
