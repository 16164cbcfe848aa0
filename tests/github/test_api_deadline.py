"""The GitHub client's deadlines are wall-clock (issue 19, item 5): the fake GitHub on 127.0.0.1
drips an answer one byte every 0.2 s, in the headers or in the body, and the call ends at its
deadline with `timed out after 1s (wall clock)`, not retried. A per-phase read timeout never fires
against such a server: the listing alone would take over a minute."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from agentv_ci.deadlines import GITHUB_DOWNLOAD_TIMEOUT_VARIABLE, GITHUB_TIMEOUT_VARIABLE, github_timeouts
from agentv_ci.errors import UsageError
from agentv_ci.github.api import GitHubApiError, GitHubClient
from tests.fakes.github_server import FakeGitHub


def _client(github: FakeGitHub, slept: list[float]) -> GitHubClient:
    return GitHubClient(
        FakeGitHub.PAT,
        github.repository,
        api_url=github.base_url,
        sleep=slept.append,
        timeout_s=1,
        download_timeout_s=1,
    )


@pytest.mark.parametrize("where", ["headers", "body"])
def test_a_dripping_api_answer_ends_at_the_deadline_and_is_not_retried(
    github_server: FakeGitHub, where: str
) -> None:
    github_server.add_artifact(files={"index.jsonl": "{}\n"})
    github_server.drip_next(path="/actions/artifacts", where=where, interval_s=0.2)
    slept: list[float] = []
    with _client(github_server, slept) as client:
        started = time.monotonic()
        with pytest.raises(GitHubApiError, match=r"timed out after 1s \(wall clock\)"):
            client.get_json(f"{client.repo_path}/actions/artifacts")
        elapsed = time.monotonic() - started
        # The client still works for the next call (the pool dropped the stalled connection).
        assert client.get_json(f"{client.repo_path}/actions/artifacts")["total_count"] == 1
    assert 0.9 <= elapsed < 3, elapsed
    assert slept == [] and len(github_server.calls("GET", "/actions/artifacts")) == 2


def test_a_dripping_download_ends_at_the_deadline(github_server: FakeGitHub, tmp_path: Path) -> None:
    artifact = github_server.add_artifact(files={"index.jsonl": "{}\n", "summary.json": "{}"})
    github_server.drip_next(path="/blobs/", server="storage", where="body", interval_s=0.2)
    slept: list[float] = []
    with _client(github_server, slept) as client:
        started = time.monotonic()
        with pytest.raises(GitHubApiError, match=r"timed out after 1s \(wall clock\)"):
            client.download(
                f"{client.repo_path}/actions/artifacts/{artifact.id}/zip", tmp_path / "a.zip", max_bytes=10**6
            )
        elapsed = time.monotonic() - started
    assert 0.9 <= elapsed < 3, elapsed
    assert len(artifact.content) * 0.2 > 30  # what the whole drip would have taken
    assert github_server.dripped[0] <= 8


def test_the_timeouts_come_from_the_environment_and_bad_values_are_usage_errors() -> None:
    assert github_timeouts({}) == (30.0, 120.0)
    assert github_timeouts({GITHUB_TIMEOUT_VARIABLE: "5", GITHUB_DOWNLOAD_TIMEOUT_VARIABLE: "7.5"}) == (
        5,
        7.5,
    )
    for bad in ("0", "-1", "soon", "nan", "inf"):
        with pytest.raises(UsageError, match=GITHUB_TIMEOUT_VARIABLE):
            github_timeouts({GITHUB_TIMEOUT_VARIABLE: bad})
