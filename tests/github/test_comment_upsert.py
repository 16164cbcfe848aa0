"""The sticky comment's upsert against the fake GitHub: find ours on any page, edit, never duplicate."""

from __future__ import annotations

import pytest

from agentv_ci.github.api import GitHubApiError, GitHubClient
from agentv_ci.github.comment import ACTIONS_BOT, comment_marker, token_identity, upsert_comment
from tests.fakes.github_server import FakeGitHub

MARKER = comment_marker("ci/abc123")
PR = 7


def _installation_client(github: FakeGitHub) -> GitHubClient:
    return GitHubClient(
        FakeGitHub.INSTALLATION, github.repository, api_url=github.base_url, sleep=lambda s: None
    )


def test_first_run_creates_second_run_edits_the_same_comment(
    github_server: FakeGitHub, github_client: GitHubClient
) -> None:
    first = upsert_comment(github_client, PR, f"run 1\n\n{MARKER}", MARKER)
    second = upsert_comment(github_client, PR, f"run 2\n\n{MARKER}", MARKER)
    assert first.action == "created" and second.action == "updated"
    assert first.id == second.id and first.id is not None
    assert second.url == f"https://github.com/octo/demo/pull/{PR}#issuecomment-{first.id}"
    comments = github_server.comments_on(PR)
    assert [(c.body, c.author) for c in comments] == [(f"run 2\n\n{MARKER}", "octocat")]


def test_marker_comment_on_page_three_is_found_and_edited(
    github_server: FakeGitHub, github_client: GitHubClient
) -> None:
    github_server.page_size = 2
    for i in range(4):
        github_server.add_comment(PR, f"chatter {i}", author="alice")
    ours = github_server.add_comment(PR, f"old results\n\n{MARKER}", author="octocat")  # 5th: page 3
    github_server.add_comment(PR, "more chatter", author="bob")
    outcome = upsert_comment(github_client, PR, f"new results\n\n{MARKER}", MARKER)
    assert outcome.action == "updated" and outcome.id == ours.id
    assert github_server.calls("POST") == []  # no duplicate
    assert len(github_server.comments_on(PR)) == 6 and ours.body == f"new results\n\n{MARKER}"
    assert {r.query.get("page", "1") for r in github_server.calls("GET", "/comments")} == {"1", "2", "3"}


def test_the_newest_of_our_marker_comments_is_edited(
    github_server: FakeGitHub, github_client: GitHubClient
) -> None:
    older = github_server.add_comment(PR, f"a\n{MARKER}", author="octocat")
    newer = github_server.add_comment(PR, f"b\n{MARKER}", author="octocat")
    outcome = upsert_comment(github_client, PR, f"c\n{MARKER}", MARKER)
    assert outcome.id == newer.id and newer.body == f"c\n{MARKER}" and older.body == f"a\n{MARKER}"


def test_someone_elses_comment_quoting_the_marker_is_never_edited(
    github_server: FakeGitHub, github_client: GitHubClient
) -> None:
    quoted = github_server.add_comment(PR, f"> why is this here?\n> {MARKER}", author="mallory")
    bot = github_server.add_comment(PR, f"from the bot\n{MARKER}", author=FakeGitHub.BOT, author_type="Bot")
    outcome = upsert_comment(github_client, PR, f"ours\n{MARKER}", MARKER)
    assert outcome.action == "created" and outcome.id not in (quoted.id, bot.id)
    assert quoted.body == f"> why is this here?\n> {MARKER}" and bot.body == f"from the bot\n{MARKER}"
    assert github_server.calls("PATCH") == []


def test_another_key_is_another_comment(github_server: FakeGitHub, github_client: GitHubClient) -> None:
    other = comment_marker("ci/other")
    upsert_comment(github_client, PR, f"one\n{MARKER}", MARKER)
    upsert_comment(github_client, PR, f"two\n{other}", other)
    assert len(github_server.comments_on(PR)) == 2


def test_identity_of_a_personal_token_is_its_login(github_client: GitHubClient) -> None:
    assert token_identity(github_client) == "octocat"


def test_identity_of_an_actions_token_is_the_actions_bot(github_server: FakeGitHub) -> None:
    with _installation_client(github_server) as client:
        assert token_identity(client) == ACTIONS_BOT
        first = upsert_comment(client, PR, f"1\n{MARKER}", MARKER)
        second = upsert_comment(client, PR, f"2\n{MARKER}", MARKER)
    assert (first.action, second.action, first.id) == ("created", "updated", second.id)
    [comment] = github_server.comments_on(PR)
    assert comment.author == ACTIONS_BOT and comment.body == f"2\n{MARKER}"
    assert len(github_server.calls("GET", "/user")) == 3  # asked (and refused) once per call


def test_a_personal_token_does_not_take_over_the_bots_comment(
    github_server: FakeGitHub, github_client: GitHubClient
) -> None:
    github_server.add_comment(PR, f"bot\n{MARKER}", author=FakeGitHub.BOT, author_type="Bot")
    assert upsert_comment(github_client, PR, f"mine\n{MARKER}", MARKER).action == "created"


def test_author_override_skips_the_identity_lookup(github_server: FakeGitHub) -> None:
    github_server.add_token("ghs_app_token", "my-app[bot]", installation=True)
    mine = github_server.add_comment(PR, f"x\n{MARKER}", author="my-app[bot]", author_type="Bot")
    client = GitHubClient("ghs_app_token", github_server.repository, api_url=github_server.base_url)
    with client:
        outcome = upsert_comment(client, PR, f"y\n{MARKER}", MARKER, author="My-App[bot]")
    assert outcome.action == "updated" and outcome.id == mine.id
    assert github_server.calls("GET", "/user") == []


def test_a_create_that_landed_despite_a_502_is_not_duplicated(
    github_server: FakeGitHub, github_client: GitHubClient
) -> None:
    github_server.fail_next(502, method="POST", apply=True)  # GitHub created it, then answered 502
    outcome = upsert_comment(github_client, PR, f"body\n{MARKER}", MARKER)
    assert outcome.action == "created"
    [comment] = github_server.comments_on(PR)
    assert outcome.id == comment.id and len(github_server.calls("POST")) == 1


def test_a_create_that_failed_with_a_502_is_tried_again(
    github_server: FakeGitHub, github_client: GitHubClient
) -> None:
    github_server.fail_next(502, method="POST")
    outcome = upsert_comment(github_client, PR, f"body\n{MARKER}", MARKER)
    assert outcome.action == "created" and len(github_server.comments_on(PR)) == 1
    assert len(github_server.calls("POST")) == 2


def test_failures_surface_as_api_errors(github_server: FakeGitHub, github_client: GitHubClient) -> None:
    github_server.fail_next(404, path="/comments", message="Not Found")
    with pytest.raises(GitHubApiError, match="404"):
        upsert_comment(github_client, PR, f"x\n{MARKER}", MARKER)
