"""`post_sticky_comment`, the Action's entry point: never raises, skips with a reason, leaks no token."""

from __future__ import annotations

from typing import Any

import pytest

from agentv_ci.github.api import RetryPolicy
from agentv_ci.github.comment import CommentOutcome, comment_marker, fork_repository, post_sticky_comment
from tests.fakes.github_server import FakeGitHub

MARKER = comment_marker("evals/abc")
BODY = f"✅ **agentv-ci: PASSED**\n\n{MARKER}"


def _event(head: str | None = "octo/demo", number: int = 7) -> dict[str, Any]:
    repo = {"full_name": head} if head is not None else None
    return {
        "action": "synchronize",
        "pull_request": {"number": number, "head": {"ref": "feature", "repo": repo}, "base": {"ref": "main"}},
        "repository": {"full_name": "octo/demo"},
    }


def _post(github: FakeGitHub, slept: list[float] | None = None, **kw: Any) -> CommentOutcome:
    options: dict[str, Any] = {
        "token": FakeGitHub.INSTALLATION,
        "repository": github.repository,
        "body": BODY,
        "marker": MARKER,
        "event": _event(),
        "event_name": "pull_request",
        "api_url": github.base_url,
        "sleep": (slept if slept is not None else []).append,
        **kw,
    }
    return post_sticky_comment(**options)


def test_creates_then_updates(github_server: FakeGitHub) -> None:
    first = _post(github_server)
    second = _post(github_server, body=f"❌ now failing\n\n{MARKER}")
    assert (first.action, second.action) == ("created", "updated") and first.id == second.id
    assert first.reason is None
    [comment] = github_server.comments_on(7)
    assert comment.author == FakeGitHub.BOT and comment.body.startswith("❌ now failing")


def test_a_body_without_the_marker_gets_it_appended(github_server: FakeGitHub) -> None:
    _post(github_server, body="no marker here")
    assert github_server.comments_on(7)[0].body == f"no marker here\n\n{MARKER}"


def test_fork_pull_request_is_skipped_without_any_call(github_server: FakeGitHub) -> None:
    outcome = _post(github_server, event=_event(head="mallory/demo"))
    assert outcome.action == "skipped" and "fork (mallory/demo)" in (outcome.reason or "")
    assert github_server.requests == []
    gone = _post(github_server, event=_event(head=None))
    assert gone.action == "skipped" and "(deleted fork)" in (gone.reason or "")


def test_fork_under_pull_request_target_is_commented(github_server: FakeGitHub) -> None:
    outcome = _post(github_server, event=_event(head="mallory/demo"), event_name="pull_request_target")
    assert outcome.action == "created"


def test_fork_detection() -> None:
    assert fork_repository(_event(), "octo/demo") is None
    assert fork_repository(_event(head="OCTO/Demo"), "octo/demo") is None  # names are case-insensitive
    assert fork_repository(_event(head="x/demo"), "octo/demo") == "x/demo"
    assert fork_repository({"push": True}, "octo/demo") is None


@pytest.mark.parametrize("token", [None, ""])
def test_no_token_is_skipped(github_server: FakeGitHub, token: str | None) -> None:
    outcome = _post(github_server, token=token)
    assert outcome.action == "skipped" and "no GitHub token" in (outcome.reason or "")
    assert github_server.requests == []


def test_not_a_pull_request_is_skipped_unless_a_number_is_given(github_server: FakeGitHub) -> None:
    push = {"ref": "refs/heads/main", "repository": {"full_name": "octo/demo"}}
    skipped = _post(github_server, event=push, event_name="push")
    assert skipped.action == "skipped" and "not a pull request" in (skipped.reason or "")
    given = _post(github_server, event=push, event_name="workflow_run", pr_number=9)
    assert given.action == "created" and len(github_server.comments_on(9)) == 1


def test_rate_limits_are_waited_out(github_server: FakeGitHub) -> None:
    slept: list[float] = []
    github_server.rate_limit_next(reset_in=0, path="/comments")
    github_server.retry_after_next(seconds=0, path="/comments")
    outcome = _post(github_server, slept)
    assert outcome.action == "created" and len(slept) == 2
    assert len(github_server.comments_on(7)) == 1


def test_server_errors_then_success(github_server: FakeGitHub) -> None:
    github_server.fail_next(502, times=2, method="GET")
    assert _post(github_server).action == "created"


def test_retries_exhausted_is_skipped_with_a_reason(github_server: FakeGitHub) -> None:
    slept: list[float] = []
    github_server.fail_next(502, times=50, path="/comments", message="Server Error")
    outcome = _post(github_server, slept)
    assert outcome == CommentOutcome(
        "skipped",
        reason="PR comment skipped: GitHub API GET /repos/octo/demo/issues/7/comments: "
        "HTTP 502: Server Error",
    )
    assert slept == [1.0, 2.0, 4.0] and len(github_server.calls("GET", "/comments")) == 4


def test_read_only_token_is_skipped_with_a_permissions_hint(github_server: FakeGitHub) -> None:
    github_server.fail_next(403, method="POST", message="Resource not accessible by integration")
    outcome = _post(github_server)
    assert outcome.action == "skipped"
    assert "Resource not accessible by integration" in (outcome.reason or "")
    assert "pull-requests: write" in (outcome.reason or "")


def test_unreachable_api_is_skipped(github_server: FakeGitHub) -> None:
    outcome = _post(github_server, api_url="http://127.0.0.1:9", retry=RetryPolicy(max_retries=1))
    assert outcome.action == "skipped" and "network error" in (outcome.reason or "")


def test_unexpected_failures_never_raise(github_server: FakeGitHub) -> None:
    outcome = _post(github_server, repository="not a repo")
    assert outcome.action == "skipped" and "owner/name" in (outcome.reason or "")
    weird = _post(github_server, event={"pull_request": {"number": 7, "head": []}, "repository": 3})
    assert weird.action == "skipped"  # a malformed event is treated as a fork, not a crash


def test_the_token_never_appears_in_any_reason(github_server: FakeGitHub) -> None:
    token = FakeGitHub.PAT
    reasons = []
    github_server.fail_next(400, message=f"bad token {token}")
    reasons.append(_post(github_server, token=token).reason)
    github_server.fail_next(500, times=4, message=f"echo {token}")  # one try and three retries
    reasons.append(_post(github_server, token=token).reason)
    reasons.append(_post(github_server, token=token, api_url=f"http://127.0.0.1:9/{token}").reason)
    reasons.append(_post(github_server, token=token, repository=f"{token}/x/y").reason)
    reasons.append(_post(github_server, token="ghp_unknown_" + token).reason)
    assert all(reasons), reasons
    for reason in reasons:
        assert token not in (reason or ""), reason
    assert any("***" in (r or "") for r in reasons)
