"""A GitLab REST (v4) client: GitHub's client (github/api.py: bounded retries, rate limits, wall-clock
deadlines, `Link` pagination, capped downloads) with GitLab's authentication, project paths and
rate-limit headers (`retrying.gitlab_rate_limit`: 429 with `Retry-After` or `RateLimit-Reset`).

The token goes in `PRIVATE-TOKEN` (a project access token) or `JOB-TOKEN` (`CI_JOB_TOKEN`), only to
the API's own origin: httpx strips `Authorization` on a redirect to another origin but not these
headers, so a request hook removes them from any request that leaves it (GitLab redirects artifact
downloads to object storage). Failures are `GitHubApiError`s; `describe` words them for GitLab.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Literal
from urllib.parse import quote

import httpx

from agentv_ci.github.api import GitHubApiError, GitHubClient
from agentv_ci.retrying import RateLimitRule, RetryPolicy, gitlab_rate_limit

__all__ = ["GitLabClient", "TokenKind", "describe"]

TokenKind = Literal["private", "job"]
_PROJECT_ID = re.compile(r"[0-9]{1,18}")
_TOKEN_HEADERS = ("private-token", "job-token")


class GitLabClient(GitHubClient):
    """GitLab v4 for one project (`project_id`, numeric); `api_url` is `CI_API_V4_URL`."""

    rate_limit: RateLimitRule = staticmethod(gitlab_rate_limit)

    def __init__(
        self,
        token: str,
        project_id: str,
        *,
        api_url: str,
        kind: TokenKind = "private",
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.kind = kind
        super().__init__(token, project_id, api_url=api_url, retry=retry, sleep=sleep)
        self._http.event_hooks["request"].append(self._keep_token_home)

    def _check_target(self, token: str, repository: str) -> None:
        if not token:
            raise ValueError("a GitLab token is required")
        if not _PROJECT_ID.fullmatch(repository):
            raise ValueError(f"the project id must be a number, got {repository[:100]!r}")

    def _auth_headers(self, token: str) -> dict[str, str]:
        return {
            "PRIVATE-TOKEN" if self.kind == "private" else "JOB-TOKEN": token,
            "Accept": "application/json",
        }

    def _keep_token_home(self, request: httpx.Request) -> None:
        if (request.url.scheme, request.url.host, request.url.port) != (
            self._origin.scheme,
            self._origin.host,
            self._origin.port,
        ):
            for name in _TOKEN_HEADERS:
                request.headers.pop(name, None)

    def __repr__(self) -> str:
        return f"GitLabClient(api_url={self.api_url!r}, project={self.repository!r})"

    @property
    def repo_path(self) -> str:
        """`/projects/<id>`, the prefix of every project endpoint."""
        return f"/projects/{quote(self.repository, safe='')}"

    def put_json(self, path: str, payload: object) -> object:
        response = self.request("PUT", path, json=payload)
        try:
            return response.json() if response.content else None
        except ValueError:
            return None


def describe(exc: GitHubApiError) -> str:
    """The failure as one line naming GitLab (the shared client words it for GitHub)."""
    where = f"{exc.method} {exc.path}".strip()
    code = f"HTTP {exc.status}" if exc.status is not None else "network error"
    return f"GitLab API {where}: {code}: {exc.message}" if where else f"GitLab API: {code}: {exc.message}"
