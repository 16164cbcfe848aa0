"""A client wired to the `github_server` fake, with its sleeps recorded instead of slept."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentv_ci.github.api import GitHubClient
from tests.fakes.github_server import FakeGitHub


@pytest.fixture
def slept() -> list[float]:
    return []


@pytest.fixture
def github_client(github_server: FakeGitHub, slept: list[float]) -> Iterator[GitHubClient]:
    """A client of the fake authenticated with its personal access token (`octocat`)."""
    with GitHubClient(
        FakeGitHub.PAT, github_server.repository, api_url=github_server.base_url, sleep=slept.append
    ) as client:
        yield client
