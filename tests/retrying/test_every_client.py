"""One retry policy for every HTTP client (issue 30): the same table of cases, run against each
client with the same `RetryPolicy` object, on an injected clock.

The forge clients (GitHub, GitLab) talk to real servers on 127.0.0.1 with their sleeps recorded; the
model-API client talks to an httpx `MockTransport` on virtual time (tests/fakes/virtual_clock.py;
real sockets do not mix with a jumping clock). A client that kept a loop of its own, or ignored the
policy it is given, would sleep other steps or send another number of requests, and fail here.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

import httpx
import pytest

from agentv_ci.errors import TargetError
from agentv_ci.github.api import GitHubApiError, GitHubClient
from agentv_ci.platforms.gitlab.client import GitLabClient
from agentv_ci.retrying import RetryPolicy, no_jitter
from agentv_ci.targets.http import JsonHttpClient
from tests.fakes.github_server import FakeGitHub
from tests.fakes.gitlab_server import FakeGitLab
from tests.fakes.virtual_clock import FakeClock

# Distinct from every client's default (GitHub: 3 retries from 1 s; model APIs: 4, jittered from 250 ms).
POLICY = RetryPolicy(max_retries=2, max_wait_s=10.0, backoff_s=0.5, jitter=no_jitter)


@dataclass(frozen=True)
class Case:
    faults: list[tuple[int, dict[str, str]]]  # answered in order before the true answer
    answered: bool  # the call ends with the true answer (else with an error of the last fault)
    requests: int
    slept: list[float] = field(default_factory=list)


CASES = {
    "a 502 is retried after the backoff, then succeeds": Case([(502, {})], True, 2, [0.5]),
    "retries stop at the attempt cap": Case([(502, {})] * 5, False, 3, [0.5, 1.0]),
    "Retry-After is honoured above the backoff": Case([(503, {"retry-after": "3"})], True, 2, [3.0]),
    "a Retry-After past the wait budget gives up at once": Case([(503, {"retry-after": "30"})], False, 1),
    "a 404 is asked once": Case([(404, {})], False, 1),
    "a 422 is asked once": Case([(422, {})], False, 1),
}


class Driver(Protocol):
    """One client under test: queue faults, call once, report requests sent and seconds slept."""

    def fail_next(self, status: int, headers: dict[str, str]) -> None: ...
    def call(self) -> int | None: ...  # None: answered; else the HTTP status of the error
    def requests(self) -> int: ...
    def slept(self) -> list[float]: ...


class GitHubDriver:
    def __init__(self, server: FakeGitHub) -> None:
        self.server = server
        self._slept: list[float] = []
        self.client = GitHubClient(
            FakeGitHub.PAT, server.repository, api_url=server.base_url, retry=POLICY, sleep=self._slept.append
        )

    def fail_next(self, status: int, headers: dict[str, str]) -> None:
        self.server.fail_next(status, path="/user", headers=headers)

    def call(self) -> int | None:
        try:
            self.client.get_json("/user")
        except GitHubApiError as exc:
            return exc.status
        return None

    def requests(self) -> int:
        return len(self.server.calls("GET", "/user"))

    def slept(self) -> list[float]:
        return self._slept


class GitLabDriver:
    def __init__(self, server: FakeGitLab) -> None:
        self.server = server
        self._slept: list[float] = []
        self.client = GitLabClient(
            FakeGitLab.PROJECT_TOKEN,
            str(server.project_id),
            api_url=server.api_url,
            retry=POLICY,
            sleep=self._slept.append,
        )

    def fail_next(self, status: int, headers: dict[str, str]) -> None:
        self.server.fail_next(status, path="/user", headers=headers)

    def call(self) -> int | None:
        try:
            self.client.get_json("/user")
        except GitHubApiError as exc:
            return exc.status
        return None

    def requests(self) -> int:
        return len(self.server.calls("GET", "/user"))

    def slept(self) -> list[float]:
        return self._slept


class _RecordingClock(FakeClock):
    def __init__(self) -> None:
        super().__init__()
        self.slept: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        await super().sleep(seconds)


class ModelApiDriver:
    def __init__(self) -> None:
        self.clock = _RecordingClock()
        self.faults: list[tuple[int, dict[str, str]]] = []
        self.sent = 0

    def _respond(self, request: httpx.Request) -> httpx.Response:
        self.sent += 1
        if self.faults:
            status, headers = self.faults.pop(0)
            return httpx.Response(status, headers=headers, json={"error": {"message": "fault"}})
        return httpx.Response(200, json={"choices": [{"message": {"content": "ok"}}]})

    def fail_next(self, status: int, headers: dict[str, str]) -> None:
        self.faults.append((status, headers))

    def call(self) -> int | None:
        async def go() -> int | None:
            client = JsonHttpClient(
                base_url="http://model.test/v1",
                headers={},
                timeout_s=5.0,
                max_retries=9,  # overridden by `retry`: the policy wins
                retry=POLICY,
                transport=httpx.MockTransport(self._respond),
                clock=self.clock,
            )
            try:
                await client.post_json("chat/completions", {"messages": []})
            except TargetError as exc:
                found = re.search(r"HTTP (\d{3})", str(exc))
                return int(found.group(1)) if found else -1
            finally:
                await client.aclose()
            return None

        return self.clock.run(go())

    def requests(self) -> int:
        return self.sent

    def slept(self) -> list[float]:
        return self.clock.slept


@contextmanager
def _driver(kind: str) -> Iterator[Driver]:
    if kind == "github":
        with FakeGitHub() as github:
            driver = GitHubDriver(github)
            with driver.client:
                yield driver
    elif kind == "gitlab":
        with FakeGitLab() as gitlab:
            lab = GitLabDriver(gitlab)
            with lab.client:
                yield lab
    else:
        yield ModelApiDriver()


CLIENTS = ["github", "gitlab", "model-api"]


@pytest.mark.parametrize("kind", CLIENTS)
@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_every_client_applies_the_one_policy(kind: str, case: Case) -> None:
    with _driver(kind) as driver:
        for status, headers in case.faults:
            driver.fail_next(status, headers)
        started = time.monotonic()
        outcome = driver.call()
        assert time.monotonic() - started < 5  # injected clocks: no real waiting
        assert outcome == (None if case.answered else case.faults[-1][0])
        assert driver.requests() == case.requests
        assert driver.slept() == case.slept


def test_the_model_api_deadline_still_ends_a_rate_limited_call() -> None:
    """A rate limit's wait spends no retry; the call's own deadline (virtual time) ends it."""
    clock = FakeClock()
    sent: list[float] = []

    def limited(request: httpx.Request) -> httpx.Response:
        sent.append(clock.now())
        return httpx.Response(429, headers={"retry-after": "1"}, json={"error": {"message": "slow"}})

    async def go() -> str:
        client = JsonHttpClient(
            base_url="http://model.test/v1", headers={}, timeout_s=5.0, max_retries=2,
            retry=POLICY, transport=httpx.MockTransport(limited), clock=clock,
        )  # fmt: skip
        try:
            await client.post_json("chat/completions", {}, deadline_s=4.5)
        except TargetError as exc:
            return str(exc)
        finally:
            await client.aclose()
        return "answered"

    message = clock.run(go())
    assert "timed out after 4.5s (wall clock)" in message
    assert len(sent) == 5 and sent[-1] - sent[0] == pytest.approx(4.0)
