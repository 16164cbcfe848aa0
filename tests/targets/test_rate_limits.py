"""Rate-limit headers and the shared limiter (targets/rate_headers.py, targets/rate_limits.py), with
`JsonHttpClient` against the fake model server on 127.0.0.1 where a request is involved."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from agentv_ci.targets.http import JsonHttpClient
from agentv_ci.targets.limiter_registry import limiter_for
from agentv_ci.targets.rate_headers import duration_seconds, rate_signal, reset_seconds, retry_after_seconds
from agentv_ci.targets.rate_limits import LimitSettings, TargetLimiter
from tests.fakes.llm_server import FakeLlmServer, Reply


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1s", 1.0), ("6m0s", 360.0), ("20ms", 0.02), ("1h2m3.5s", 3723.5), ("0.5", 0.5), ("2", 2.0)],
)
def test_openai_reset_durations(text: str, seconds: float) -> None:
    assert duration_seconds(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["soon", "1x", "s", "1s junk", ""])
def test_what_is_not_a_duration(text: str) -> None:
    assert duration_seconds(text) is None


def test_anthropic_rfc3339_reset_and_http_date_retry_after() -> None:
    later = datetime.now(UTC) + timedelta(seconds=30)
    assert reset_seconds(later.isoformat().replace("+00:00", "Z")) == pytest.approx(30, abs=1.5)
    assert reset_seconds((datetime.now(UTC) - timedelta(seconds=5)).isoformat()) == 0.0  # past: no wait
    dated = {"retry-after": format_datetime(later.replace(microsecond=0), usegmt=True)}
    assert retry_after_seconds(dated) == pytest.approx(30, abs=1.5)
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25


def test_a_used_up_limit_says_how_long() -> None:
    openai = {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "6m0s"}
    assert rate_signal(openai).exhausted_for == pytest.approx(360)
    tokens_left = {"x-ratelimit-remaining-requests": "5", "x-ratelimit-reset-requests": "1s"}
    assert rate_signal(tokens_left).exhausted_for is None
    reset = (datetime.now(UTC) + timedelta(seconds=20)).isoformat()
    anthropic = {"anthropic-ratelimit-tokens-remaining": "0", "anthropic-ratelimit-tokens-reset": reset}
    assert rate_signal(anthropic).exhausted_for == pytest.approx(20, abs=1.5)
    assert rate_signal({}) == rate_signal({"x-ratelimit-remaining-requests": "0"})  # no reset: nothing


def test_a_429_cuts_the_whole_targets_concurrency_and_rate() -> None:
    async def go() -> TargetLimiter:
        limiter = TargetLimiter("t", LimitSettings())
        for _ in range(8):
            await limiter.acquire()
        for _ in range(4):
            limiter.release_ok()
        wait = limiter.release_limited(None)  # no header: the default wait
        assert wait == 1.0
        return limiter

    limiter = asyncio.run(go())
    assert limiter.window == 2.0  # 4 in flight when the 429 came: halved
    assert limiter.rate is not None and limiter.rate > 0
    assert limiter.limited == 1


def test_a_few_429s_at_a_learned_pace_cost_a_dip_not_the_servers_whole_wait() -> None:
    """A couple of 429s at a pace already learned (bursts the server's bucket did not absorb): the
    pace is cut, then comes back to about the pace that was limited within a fraction of a second,
    although the server asked the rejected requests to wait 5 s."""

    async def go() -> tuple[float, float, float]:
        limiter = TargetLimiter("t", LimitSettings())
        limiter.rate = 400.0  # a pace learned from earlier episodes that agreed; probing is over
        limiter._peak = 400.0
        limiter._confirmed = True
        limiter._probing = False
        started = time.monotonic()
        while time.monotonic() - started < 0.25:  # answers at that pace
            await limiter.acquire()
            limiter.release_ok()
        before = limiter.rate
        await limiter.acquire()
        await limiter.acquire()
        assert limiter.release_limited(5.0) == 5.0  # the rejected requests wait what they were told
        limiter.release_limited(5.0)
        cut = limiter.rate
        cut_at = time.monotonic()
        while time.monotonic() - cut_at < 0.6:
            await limiter.acquire()
            limiter.release_ok()
        return before, cut, limiter.rate

    before, cut, after = asyncio.run(go())
    assert cut < 0.96 * before  # the episode cut the pace
    assert after > cut  # it grew again well before the server's 5 s were over
    assert after >= 0.96 * before  # back to about the pace that was limited
    assert after <= 1.06 * before  # not far beyond the pace that was limited (+12 % a second there)


def test_at_a_slow_pace_two_429s_some_sends_apart_are_the_limit() -> None:
    """At 20 requests/s two 429s 0.3 s apart (6 sends) are a limit, not a lone burst: the pace is cut."""

    async def go() -> tuple[float, float, float]:
        limiter = TargetLimiter("t", LimitSettings())
        limiter.rate = 20.0
        limiter._probing = False
        for _ in range(4):
            await limiter.acquire()
            limiter.release_ok()
        before = limiter.rate
        await limiter.acquire()
        await limiter.acquire()
        limiter.release_limited(1.0)
        lone = limiter.rate
        await asyncio.sleep(0.3)
        limiter.release_limited(1.0)
        assert limiter.rate is not None and lone is not None
        return before, lone, limiter.rate

    before, lone, after = asyncio.run(go())
    assert lone == before  # a lone 429 at a learned pace: jitter, the pace stands
    assert after < before  # the second, within 10 sends at that pace: the limit


def test_hold_delays_every_request_of_the_target() -> None:
    async def go() -> float:
        limiter = TargetLimiter("t", LimitSettings())
        limiter.hold(0.3)
        started = time.monotonic()
        await asyncio.gather(limiter.acquire(), limiter.acquire())
        return time.monotonic() - started

    assert asyncio.run(go()) >= 0.29


def test_max_tpm_waits_for_tokens() -> None:
    """A bucket of 600 tokens a minute (10 a second): the second 10-token request waits about 1 s."""

    async def go() -> float:
        limiter = TargetLimiter("t", LimitSettings(max_tpm=600))
        limiter.charge(590)  # most of the minute's tokens are spent
        await limiter.acquire(10)
        limiter.release_ok()
        started = time.monotonic()
        await limiter.acquire(10)
        return time.monotonic() - started

    assert asyncio.run(go()) >= 0.9


def test_one_limiter_per_endpoint_in_a_run_and_the_stricter_limit_holds() -> None:
    async def go() -> tuple[TargetLimiter, TargetLimiter, TargetLimiter]:
        a = limiter_for(("u", "m", "k"), "a", LimitSettings(max_concurrency=4))
        b = limiter_for(("u", "m", "k"), "b", LimitSettings(max_concurrency=2, max_rpm=60))
        other = limiter_for(("u", "other-model", "k"), "c", LimitSettings())
        return a, b, other

    a, b, other = asyncio.run(go())
    assert a is b and a is not other
    assert a.settings == LimitSettings(max_rpm=60, max_concurrency=2)
    assert asyncio.run(go())[0] is not a  # a new run (event loop) starts afresh


def test_reset_headers_on_a_429_are_waited_without_spending_max_retries(llm_server: FakeLlmServer) -> None:
    """OpenAI's `x-ratelimit-reset-requests` (no retry-after) on a 429, with `max_retries: 0`."""
    seen: list[float] = []

    def respond(call: object) -> Reply:
        seen.append(time.monotonic())
        if len(seen) == 1:
            headers = {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "300ms"}
            return Reply(status=429, headers=headers, body={"error": {"message": "slow down"}})
        return Reply(text="after the reset")

    llm_server.responder = respond  # type: ignore[assignment]

    async def go() -> object:
        client = JsonHttpClient(base_url=llm_server.base_url, headers={}, timeout_s=5.0, max_retries=0)
        try:
            return await client.post_json("chat/completions", {"model": "m", "messages": []})
        finally:
            await client.aclose()

    body = asyncio.run(go())
    assert body["choices"][0]["message"]["content"] == "after the reset"  # type: ignore[index]
    assert seen[1] - seen[0] >= 0.29


def test_a_server_that_only_says_429_is_given_up_on_within_the_tests_deadline(
    llm_server: FakeLlmServer,
) -> None:
    """Rate-limit waits do not spend max_retries, but the test's own deadline still ends them."""
    llm_server.responder = lambda call: Reply(status=429, headers={"retry-after": "0.1"}, body={})

    async def go() -> None:
        client = JsonHttpClient(base_url=llm_server.base_url, headers={}, timeout_s=5.0, max_retries=0)
        try:
            async with asyncio.timeout(0.6):
                await client.post_json("chat/completions", {})
        finally:
            await client.aclose()

    with pytest.raises(TimeoutError):
        asyncio.run(go())
    assert len(llm_server.calls) >= 3  # waited and asked again several times, no retry spent
