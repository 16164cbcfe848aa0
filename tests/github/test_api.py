"""The GitHub REST client against a real local server: headers, retries, pagination, errors."""

from __future__ import annotations

import socket

import pytest

from agentv_ci import __version__
from agentv_ci.github.api import GitHubApiError, GitHubClient, RetryPolicy
from tests.fakes.github_server import FakeGitHub


def _comments_path(client: GitHubClient, pr: int = 7) -> str:
    return f"{client.repo_path}/issues/{pr}/comments"


def test_sends_the_documented_headers(github_server: FakeGitHub, github_client: GitHubClient) -> None:
    assert github_client.get_json("/user")["login"] == "octocat"
    headers = github_server.requests[-1].headers
    assert headers["authorization"] == f"Bearer {FakeGitHub.PAT}"
    assert headers["accept"] == "application/vnd.github+json"
    assert headers["x-github-api-version"] == "2022-11-28"
    assert headers["user-agent"] == f"agentv-ci/{__version__}"


def test_server_errors_are_retried_with_backoff(
    github_server: FakeGitHub, github_client: GitHubClient, slept: list[float]
) -> None:
    github_server.fail_next(502, times=2)
    assert github_client.get_json("/user")["login"] == "octocat"
    assert len(github_server.calls("GET", "/user")) == 3
    assert slept == [1.0, 2.0]


def test_primary_rate_limit_waits_until_the_reset(
    github_server: FakeGitHub, github_client: GitHubClient, slept: list[float]
) -> None:
    github_server.rate_limit_next(reset_in=5)
    assert github_client.get_json("/user")["login"] == "octocat"
    assert len(github_server.requests) == 2
    assert len(slept) == 1 and 3.0 <= slept[0] <= 6.0  # the reset epoch, whole seconds


def test_retry_after_is_obeyed(
    github_server: FakeGitHub, github_client: GitHubClient, slept: list[float]
) -> None:
    github_server.retry_after_next(seconds=0)
    github_server.retry_after_next(seconds=2, status=403)  # a secondary rate limit
    assert github_client.get_json("/user")["login"] == "octocat"
    assert slept == [0.0, 2.0]


def test_a_rate_limit_longer_than_the_wait_cap_gives_up_at_once(
    github_server: FakeGitHub, github_client: GitHubClient, slept: list[float]
) -> None:
    github_server.rate_limit_next(reset_in=3600)
    with pytest.raises(GitHubApiError) as caught:
        github_client.get_json("/user")
    assert caught.value.status == 403
    assert "API rate limit exceeded" in caught.value.message and "resets in" in caught.value.message
    assert slept == [] and len(github_server.requests) == 1


def test_a_plain_403_is_a_permission_answer_not_retried(
    github_server: FakeGitHub, github_client: GitHubClient, slept: list[float]
) -> None:
    github_server.fail_next(403, message="Resource not accessible by integration")
    with pytest.raises(GitHubApiError, match="HTTP 403: Resource not accessible by integration"):
        github_client.get_json("/user")
    assert slept == []


def test_retries_are_bounded_in_count(
    github_server: FakeGitHub, github_client: GitHubClient, slept: list[float]
) -> None:
    github_server.fail_next(500, times=10)
    with pytest.raises(GitHubApiError) as caught:
        github_client.get_json("/user")
    assert caught.value.status == 500 and caught.value.path == "/user"
    assert len(github_server.requests) == 4  # one try and three retries
    assert slept == [1.0, 2.0, 4.0]


def test_retries_are_bounded_in_total_wait(github_server: FakeGitHub) -> None:
    slept: list[float] = []
    policy = RetryPolicy(max_retries=10, max_wait_s=3.5, backoff_s=1.0)
    github_server.fail_next(503, times=10)
    with (
        GitHubClient(
            FakeGitHub.PAT,
            github_server.repository,
            api_url=github_server.base_url,
            retry=policy,
            sleep=slept.append,
        ) as client,
        pytest.raises(GitHubApiError),
    ):
        client.get_json("/user")
    assert slept == [1.0, 2.0]  # the next 4 s would pass the 3.5 s cap
    assert len(github_server.requests) == 3


def test_a_dropped_connection_is_retried(
    github_server: FakeGitHub, github_client: GitHubClient, slept: list[float]
) -> None:
    github_server.drop_next()
    assert github_client.get_json("/user")["login"] == "octocat"
    assert slept == [1.0]


def test_a_post_is_not_retried_after_a_server_error(
    github_server: FakeGitHub, github_client: GitHubClient, slept: list[float]
) -> None:
    github_server.fail_next(502, method="POST")
    with pytest.raises(GitHubApiError) as caught:
        github_client.post_json(_comments_path(github_client), {"body": "x"})
    assert caught.value.status == 502 and slept == []
    assert len(github_server.calls("POST")) == 1


def test_a_post_is_retried_after_a_rate_limit(github_server: FakeGitHub, github_client: GitHubClient) -> None:
    github_server.retry_after_next(seconds=0, path="/comments")
    github_client.post_json(_comments_path(github_client), {"body": "x"})
    assert [c.body for c in github_server.comments_on(7)] == ["x"]


def test_network_failure_is_an_api_error_without_the_token() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    slept: list[float] = []
    with (
        GitHubClient(
            FakeGitHub.PAT, "octo/demo", api_url=f"http://127.0.0.1:{port}", sleep=slept.append
        ) as client,
        pytest.raises(GitHubApiError) as caught,
    ):
        client.get_json("/user")
    assert caught.value.status is None and "ConnectError" in str(caught.value)
    assert len(slept) == 3
    assert FakeGitHub.PAT not in str(caught.value) and FakeGitHub.PAT not in repr(caught.value)


def test_error_message_comes_from_github_json(github_client: GitHubClient) -> None:
    with pytest.raises(GitHubApiError) as caught:
        github_client.get_json(f"{github_client.repo_path}/nothing-here")
    assert caught.value.status == 404 and caught.value.message == "Not Found"
    assert str(caught.value) == "GitHub API GET /repos/octo/demo/nothing-here: HTTP 404: Not Found"


def test_bad_credentials(github_server: FakeGitHub) -> None:
    client = GitHubClient("ghp_wrong", github_server.repository, api_url=github_server.base_url)
    with client, pytest.raises(GitHubApiError, match="HTTP 401: Bad credentials") as caught:
        client.get_json("/user")
    assert "ghp_wrong" not in str(caught.value)


def test_the_token_is_redacted_even_when_the_server_echoes_it(
    github_server: FakeGitHub, github_client: GitHubClient
) -> None:
    github_server.fail_next(400, message=f"token {FakeGitHub.PAT} is malformed")
    with pytest.raises(GitHubApiError) as caught:
        github_client.get_json("/user")
    assert FakeGitHub.PAT not in str(caught.value) and "token *** is malformed" in str(caught.value)
    assert FakeGitHub.PAT not in repr(github_client)


def test_pagination_follows_link_headers(github_server: FakeGitHub, github_client: GitHubClient) -> None:
    github_server.page_size = 2
    for i in range(5):
        github_server.add_comment(7, f"c{i}")
    bodies = [c["body"] for c in github_client.paginate(_comments_path(github_client))]
    assert bodies == ["c0", "c1", "c2", "c3", "c4"]
    pages = [r.query.get("page", "1") for r in github_server.calls("GET", "/comments")]
    assert pages == ["1", "2", "3"]


def test_pagination_refuses_a_link_to_another_origin(
    github_server: FakeGitHub, github_client: GitHubClient
) -> None:
    github_server.page_size = 1
    github_server.add_comment(7, "a")
    github_server.add_comment(7, "b")
    github_server.link_base = github_server.storage_url  # page 2 would be fetched from elsewhere
    with pytest.raises(GitHubApiError, match="leaves the API origin"):
        list(github_client.paginate(_comments_path(github_client)))
    assert github_server.requests_to("storage") == []  # the token never went there


def test_bad_repository_names_are_refused() -> None:
    for bad in ("octo", "octo/demo/x", "../x", "octo/de mo", "o/.."):
        with pytest.raises(ValueError, match="owner/name"):
            GitHubClient("t", bad)
    with pytest.raises(ValueError, match="token"):
        GitHubClient("", "octo/demo")
