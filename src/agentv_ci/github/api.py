"""A small GitHub REST client over httpx: auth headers, bounded retries, `Link` pagination, downloads.

Retries are the one policy of retrying/ (at most `max_retries`, never more than `max_wait_s` of
sleeping in all): 5xx answers and network errors back off 1 s, 2 s, 4 s...; rate limits (403/429
with `Retry-After`, or `x-ratelimit-remaining: 0` with `x-ratelimit-reset`: `rate_limit`, a rule
another forge replaces) wait the advised time. When the advised wait does not fit in what is left of
`max_wait_s`, the client gives up at once rather than sleep in vain.

Each call has a wall-clock deadline (`timeout_s`; `download_timeout_s` for a download, retries
included) from connect to the last byte (`wall_clock`); a server that drips bytes is not retried.

Every failure is a `GitHubApiError` (status and GitHub's JSON `message`), never an httpx traceback.
The token is sent only as the `Authorization` header to the API's own origin: it is kept out of
every exception message, log line and repr, a `Link` to another origin is refused, and redirects to
another origin (artifact downloads go to a storage host) lose the header (httpx strips it).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from agentv_ci import __version__
from agentv_ci.deadlines import github_timeouts, timed_out
from agentv_ci.github import wall_clock
from agentv_ci.retrying import (
    GiveUp,
    RateLimitRule,
    Retry,
    RetryPolicy,
    advice_for,
    call_with_retries,
    github_rate_limit,
    header_seconds,
)

__all__ = [
    "DEFAULT_API_URL",
    "GitHubApiError",
    "GitHubClient",
    "RetryPolicy",
]

DEFAULT_API_URL = "https://api.github.com"
API_VERSION = "2022-11-28"
_REPOSITORY = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_NEXT_LINK = re.compile(r'<([^>]*)>\s*;\s*rel="?next"?', re.IGNORECASE)
_MAX_MESSAGE = 300
_MAX_PAGES = 100  # 10,000 items at per_page=100: far beyond any PR's comments or a name's artifacts
logger = logging.getLogger(__name__)
_Failed = httpx.Response | httpx.HTTPError  # what a retried attempt got: the answer, or the error


class GitHubApiError(Exception):
    """A GitHub API call failed: `status` (None for a network error) and GitHub's `message`."""

    def __init__(self, status: int | None, message: str, *, method: str = "", path: str = "") -> None:
        self.status = status
        self.message = message
        self.method = method
        self.path = path
        where = f"{method} {path}".strip()
        code = f"HTTP {status}" if status is not None else "network error"
        super().__init__(f"GitHub API {where}: {code}: {message}" if where else f"{code}: {message}")


class GitHubClient:
    """GitHub REST v3 for one repository. Use as a context manager (or call `close`).

    `api_url` is `GITHUB_API_URL` (GitHub Enterprise: `https://HOST/api/v3`), `repository` is
    `owner/name`. `sleep` and `clock` are injectable so tests wait no real time. `timeout_s` /
    `download_timeout_s` None: `deadlines.github_timeouts()` (30 s / 120 s unless set).
    """

    rate_limit: RateLimitRule = staticmethod(github_rate_limit)

    def __init__(
        self,
        token: str,
        repository: str,
        *,
        api_url: str = DEFAULT_API_URL,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        timeout_s: float | None = None,
        download_timeout_s: float | None = None,
    ) -> None:
        self._check_target(token, repository)
        self.repository = repository
        self.api_url = (api_url or DEFAULT_API_URL).rstrip("/")
        self.retry = retry or RetryPolicy()
        self._token = token
        self._sleep = sleep
        self._clock = clock
        self._origin = httpx.URL(self.api_url)
        call_s, download_s = github_timeouts()
        self.timeout_s = timeout_s or call_s
        self.download_timeout_s = download_timeout_s or download_s
        self._http = httpx.Client(
            base_url=self.api_url + "/",
            headers={**self._auth_headers(token), "User-Agent": f"agentv-ci/{__version__}"},
            timeout=httpx.Timeout(self.timeout_s, connect=min(10.0, self.timeout_s)),
            follow_redirects=True,  # httpx drops Authorization when a redirect leaves the origin
        )
        wall_clock.install(self._http)

    def _check_target(self, token: str, repository: str) -> None:
        """Refuse a missing token or a repository that is not `owner/name` (a subclass for another
        forge checks its own project id)."""
        if not token:
            raise ValueError("a GitHub token is required")
        if not _REPOSITORY.fullmatch(repository) or ".." in repository:
            raise ValueError(f"repository must be owner/name, got {repository[:100]!r}")

    def _auth_headers(self, token: str) -> dict[str, str]:
        """The headers sent with every request to the API's origin."""
        return {
            "Authorization": f"Bearer {token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
        }

    def __repr__(self) -> str:
        return f"GitHubClient(api_url={self.api_url!r}, repository={self.repository!r})"

    def __enter__(self) -> GitHubClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    @property
    def repo_path(self) -> str:
        """`/repos/owner/name`, the prefix of every repository endpoint."""
        owner, name = self.repository.split("/", 1)
        return f"/repos/{quote(owner, safe='')}/{quote(name, safe='')}"

    def redact(self, text: str) -> str:
        """`text` with the token replaced by `***` (for anything that may reach a log)."""
        return text.replace(self._token, "***") if self._token in text else text

    # -- requests -------------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str | int] | None = None,
        json: Any = None,
        idempotent: bool | None = None,
    ) -> httpx.Response:
        """One call (with retries); a non-2xx answer raises `GitHubApiError`.

        A request that is not idempotent (POST by default) is retried only when it surely was not
        processed: a rate-limit answer or a failed connect, never after a 5xx or a lost answer.
        """
        safe = idempotent if idempotent is not None else method != "POST"
        response = self._send(method, path, params=params, json=json, idempotent=safe)
        if not response.is_success:
            raise self._error(response, method, path)
        return response

    def get_json(self, path: str, *, params: Mapping[str, str | int] | None = None) -> Any:
        return _json_of(self.request("GET", path, params=params), "GET", path)

    def post_json(self, path: str, payload: Any, *, idempotent: bool = False) -> Any:
        return _json_of(self.request("POST", path, json=payload, idempotent=idempotent), "POST", path)

    def patch_json(self, path: str, payload: Any) -> Any:
        return _json_of(self.request("PATCH", path, json=payload), "PATCH", path)

    def paginate(
        self,
        path: str,
        *,
        params: Mapping[str, str | int] | None = None,
        items_key: str | None = None,
        max_pages: int = _MAX_PAGES,
    ) -> Iterator[Any]:
        """Every item of every page, following `Link: <...>; rel="next"` (same origin only).

        A page is a JSON list, or an object whose `items_key` holds the list (e.g. `artifacts`).
        """
        url: str = path
        query: Mapping[str, str | int] | None = {"per_page": 100, **(params or {})}
        for _ in range(max_pages):
            response = self.request("GET", url, params=query)
            page = _json_of(response, "GET", path)
            items = page.get(items_key) if items_key and isinstance(page, dict) else page
            if not isinstance(items, list):
                raise GitHubApiError(response.status_code, "unexpected page shape", method="GET", path=path)
            yield from items
            next_url = _next_link(response.headers.get("link", ""))
            if next_url is None:
                return
            if not self._same_origin(next_url):
                raise GitHubApiError(
                    response.status_code, "pagination link leaves the API origin", method="GET", path=path
                )
            url, query = next_url, None  # the link carries the query (page, per_page, filters)
        raise GitHubApiError(None, f"more than {max_pages} pages", method="GET", path=path)

    def download(
        self, path: str, destination: Path, *, max_bytes: int, timeout_s: float | None = None
    ) -> int:
        """Stream `path` (following redirects) into `destination`; returns its size in bytes. Raises
        `GitHubApiError` on a failed answer, a body over `max_bytes`, or past `timeout_s`."""
        seconds = timeout_s or self.download_timeout_s
        with wall_clock.deadline(seconds):
            return self._download(path, destination, max_bytes, seconds)

    def _download(self, path: str, destination: Path, max_bytes: int, seconds: float) -> int:
        def attempt() -> int | Retry[_Failed]:
            try:
                with self._http.stream("GET", path) as response:
                    if response.is_success:
                        return _save_stream(response, destination, max_bytes, path)
                    response.read()
                    retry = self._retry_of(response)
                    if isinstance(retry, httpx.Response):
                        raise self._error(response, "GET", path)
                    return retry
            except httpx.HTTPError as exc:
                if wall_clock.passed():
                    raise GitHubApiError(
                        None, timed_out(seconds), method="GET", path=_shown_path(path)
                    ) from None
                return Retry(exc)

        def give_up(retry: Retry[_Failed], _: GiveUp) -> int:
            raise self._failure(retry.failure, "GET", path)

        return call_with_retries(attempt, policy=self.retry, wait=self._waiter("GET", path), give_up=give_up)

    # -- retries --------------------------------------------------------------------------------

    def _send(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, str | int] | None,
        json: Any,
        idempotent: bool,
    ) -> httpx.Response:
        shown = _shown_path(url)

        def attempt() -> httpx.Response | Retry[_Failed]:
            started = time.monotonic()
            try:
                with wall_clock.deadline(self.timeout_s):  # connect to the last byte of the body
                    response = self._http.request(method, url, params=params, json=json)
            except httpx.HTTPError as exc:
                if time.monotonic() - started >= self.timeout_s:  # a server this slow is not retried
                    raise GitHubApiError(None, timed_out(self.timeout_s), method=method, path=shown) from None
                if not idempotent and not isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
                    raise self._network_error(exc, method, shown) from None
                return Retry(exc)
            if not idempotent and response.status_code >= 500:
                return response  # it may have been processed: asking again could do it twice
            return self._retry_of(response)

        def give_up(retry: Retry[_Failed], _: GiveUp) -> httpx.Response:
            if isinstance(retry.failure, httpx.Response):
                return retry.failure  # the caller words the last answer
            raise self._network_error(retry.failure, method, shown)

        return call_with_retries(
            attempt, policy=self.retry, wait=self._waiter(method, shown), give_up=give_up
        )

    def _retry_of(self, response: httpx.Response) -> httpx.Response | Retry[_Failed]:
        """`response` as final, or a `Retry` with the wait it advises (the policy and `rate_limit`)."""
        if response.is_success:
            return response
        advice = advice_for(
            response.status_code, response.headers, self.retry, self.rate_limit, self._clock()
        )
        return response if advice is None else Retry(response, advice.wait_s)

    def _waiter(self, method: str, path: str) -> Callable[[Retry[_Failed], float], None]:
        shown = _shown_path(path)

        def wait(_: Retry[_Failed], delay: float) -> None:
            logger.info("GitHub API %s %s: retry in %.1f s", method, shown, delay)
            self._sleep(delay)

        return wait

    def _failure(self, failure: _Failed, method: str, path: str) -> GitHubApiError:
        if isinstance(failure, httpx.Response):
            return self._error(failure, method, path)
        return self._network_error(failure, method, path)

    def _network_error(self, exc: httpx.HTTPError, method: str, path: str) -> GitHubApiError:
        detail = self.redact(str(exc))[:_MAX_MESSAGE] or "no detail"
        return GitHubApiError(None, f"{type(exc).__name__}: {detail}", method=method, path=_shown_path(path))

    def _error(self, response: httpx.Response, method: str, path: str) -> GitHubApiError:
        message = _message_of(response) or response.reason_phrase or "request failed"
        if response.status_code in (403, 429) and response.headers.get("x-ratelimit-remaining") == "0":
            reset = header_seconds(response.headers.get("x-ratelimit-reset"))
            if reset is not None:
                message += f" (rate limit resets in {max(0, round(reset - self._clock()))} s)"
        return GitHubApiError(
            response.status_code,
            self.redact(message)[:_MAX_MESSAGE],
            method=method,
            path=_shown_path(path),
        )

    def _same_origin(self, url: str) -> bool:
        other = httpx.URL(url)
        return (other.scheme, other.host, other.port) == (
            self._origin.scheme,
            self._origin.host,
            self._origin.port,
        )


def _shown_path(url: str) -> str:
    """A request target as errors and logs show it: the path only, no query, no host."""
    parsed = httpx.URL(url)
    return parsed.path if parsed.is_absolute_url else url.split("?", 1)[0]


def _next_link(header: str) -> str | None:
    for part in header.split(","):
        match = _NEXT_LINK.search(part)
        if match:
            return match.group(1).strip()
    return None


def _message_of(response: httpx.Response) -> str:
    """GitHub's `message` plus the first validation error's message (a 422 explains itself there)."""
    try:
        data = response.json()
    except ValueError:
        return response.text.strip()[:_MAX_MESSAGE]
    if not isinstance(data, dict):
        return ""
    message = str(data.get("message") or "")
    errors = data.get("errors")
    if isinstance(errors, list) and errors:
        first = errors[0]
        detail = first.get("message") if isinstance(first, dict) else first
        if detail:
            message = f"{message}: {detail}" if message else str(detail)
    return message


def _json_of(response: httpx.Response, method: str, path: str) -> Any:
    if response.status_code == 204 or not response.content:
        return None
    try:
        return response.json()
    except ValueError:
        raise GitHubApiError(
            response.status_code, "the answer is not JSON", method=method, path=_shown_path(path)
        ) from None


def _save_stream(response: httpx.Response, destination: Path, max_bytes: int, path: str) -> int:
    total = 0
    with destination.open("wb") as handle:
        for chunk in response.iter_bytes(64 * 1024):
            total += len(chunk)
            if total > max_bytes:
                raise GitHubApiError(
                    response.status_code,
                    f"download larger than {max_bytes:,} bytes",
                    method="GET",
                    path=_shown_path(path),
                )
            handle.write(chunk)
    return total
