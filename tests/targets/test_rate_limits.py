"""Rate-limit headers and the shared limiter (targets/rate_headers.py, targets/rate_limits.py). The
limiter runs on virtual time (tests/fakes/virtual_clock.py): durations are exact and nothing sleeps;
where a request is involved, `JsonHttpClient` talks to an httpx `MockTransport` on the same clock."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from agentv_ci.targets.http import JsonHttpClient
from agentv_ci.targets.limiter_registry import limiter_for
from agentv_ci.targets.rate_headers import duration_seconds, rate_signal, reset_seconds, retry_after_seconds
from agentv_ci.targets.rate_limits import LimitSettings, TargetLimiter
from tests.fakes.virtual_bucket import Bucket, answer_for, drive, learn
from tests.fakes.virtual_clock import FakeClock


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
    clock = FakeClock()

    async def go() -> TargetLimiter:
        limiter = TargetLimiter("t", LimitSettings(), clock=clock)
        for _ in range(8):
            await limiter.acquire()
        for _ in range(4):
            limiter.release_ok()
        wait = limiter.release_limited(None)  # no header: the default wait
        assert wait == 1.0
        return limiter

    limiter = clock.run(go())
    assert limiter.window == 2.0  # 4 in flight when the 429 came: halved
    assert limiter.rate is not None and limiter.rate > 0
    assert limiter.limited == 1 and limiter.episodes == 1


def test_the_limiter_learns_a_servers_limit_and_keeps_429s_rare() -> None:
    """50 workers against 400 requests/s for 8 s (as bench/rate_limits.py, in virtual time): the
    answers come at about the limit, and a 429 is an episode's few, not a steady share."""
    clock = FakeClock()

    async def go() -> tuple[Bucket, TargetLimiter]:
        limiter = TargetLimiter("t", LimitSettings(), clock=clock)
        bucket = Bucket(clock, 400)
        end = clock.now() + 8.0
        await drive(limiter, bucket, lambda: clock.now() >= end)
        return bucket, limiter

    bucket, limiter = clock.run(go())
    assert bucket.answered >= 0.95 * 400 * 8  # within 5 % of what the limit allows
    assert bucket.limited <= 0.03 * bucket.answered
    assert limiter.limited == bucket.limited and limiter.rate is not None
    assert 0.85 * 400 <= limiter.rate <= 1.15 * 400


def test_a_few_429s_at_a_learned_pace_cost_a_dip_not_the_servers_whole_wait() -> None:
    """A couple of 429s at a pace already learned (bursts the server's bucket did not absorb): the
    pace is cut, then comes back to about the pace that was limited within a fraction of a second,
    although the server asked the rejected requests to wait 5 s."""
    clock = FakeClock()

    async def go() -> tuple[float, float, float]:
        limiter = await learn(clock, 400, episodes=4)  # episodes that agree: probing is over
        await answer_for(limiter, clock, 0.25)  # answers at that pace
        assert limiter.rate is not None
        before = limiter.rate
        await limiter.acquire()
        await limiter.acquire()
        assert limiter.release_limited(5.0) == 5.0  # the rejected requests wait what they were told
        limiter.release_limited(5.0)
        cut = limiter.rate
        await answer_for(limiter, clock, 0.6)
        assert cut is not None and limiter.rate is not None
        return before, cut, limiter.rate

    before, cut, after = clock.run(go())
    assert cut < 0.96 * before  # the episode cut the pace
    assert after >= 0.96 * before  # back to about the pace that was limited, well before 5 s
    assert after <= 1.06 * before  # not far beyond the pace that was limited (+12 % a second there)


def test_at_a_slow_pace_two_429s_some_sends_apart_are_the_limit() -> None:
    """At 20 requests/s two 429s 0.3 s apart (6 sends) are a limit, not a lone burst: the pace is cut."""
    clock = FakeClock()

    async def go() -> tuple[float, float, float]:
        limiter = await learn(clock, 20, episodes=3)
        await answer_for(limiter, clock, 1.0)  # the last episode's 429s are long past
        assert limiter.rate is not None
        before = limiter.rate
        await limiter.acquire()
        await limiter.acquire()
        limiter.release_limited(1.0)
        lone = limiter.rate
        await clock.sleep(0.3)
        limiter.release_limited(1.0)
        assert limiter.rate is not None and lone is not None
        return before, lone, limiter.rate

    before, lone, after = clock.run(go())
    assert lone == before  # a lone 429 at a learned pace: jitter, the pace stands
    assert after < before  # the second, within 10 sends at that pace: the limit


def test_hold_delays_every_request_of_the_target() -> None:
    clock = FakeClock()

    async def go() -> tuple[float, list[float]]:
        limiter = TargetLimiter("t", LimitSettings(), clock=clock)
        limiter.hold(0.3)
        held = limiter.holding_s()
        started = clock.now()
        admitted: list[float] = []

        async def send() -> None:
            await limiter.acquire()
            admitted.append(clock.now() - started)

        await asyncio.gather(send(), send())
        return held, admitted

    held, admitted = clock.run(go())
    assert held == pytest.approx(0.3)
    assert admitted == [pytest.approx(0.3)] * 2  # both, not only the first


def test_max_tpm_waits_for_tokens() -> None:
    """A bucket of 600 tokens a minute (10 a second): the second 10-token request waits 1 s."""
    clock = FakeClock()

    async def go() -> float:
        limiter = TargetLimiter("t", LimitSettings(max_tpm=600), clock=clock)
        limiter.charge(590)  # most of the minute's tokens are spent
        await limiter.acquire(10)
        limiter.release_ok()
        started = clock.now()
        await limiter.acquire(10)
        return clock.now() - started

    assert clock.run(go()) == pytest.approx(1.0)


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


def _client(clock: FakeClock, handler: httpx.MockTransport) -> JsonHttpClient:
    return JsonHttpClient(
        base_url="http://model.test/v1",
        headers={},
        timeout_s=5.0,
        max_retries=0,
        transport=handler,
        clock=clock,
    )


def test_reset_headers_on_a_429_are_waited_without_spending_max_retries() -> None:
    """OpenAI's `x-ratelimit-reset-requests` (no retry-after) on a 429, with `max_retries: 0`."""
    clock = FakeClock()
    seen: list[float] = []

    def respond(request: httpx.Request) -> httpx.Response:
        seen.append(clock.now())
        if len(seen) == 1:
            headers = {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "300ms"}
            return httpx.Response(429, headers=headers, json={"error": {"message": "slow down"}})
        return httpx.Response(200, json={"choices": [{"message": {"content": "after the reset"}}]})

    async def go() -> object:
        client = _client(clock, httpx.MockTransport(respond))
        try:
            return await client.post_json("chat/completions", {"model": "m", "messages": []})
        finally:
            await client.aclose()

    body = clock.run(go())
    assert body["choices"][0]["message"]["content"] == "after the reset"  # type: ignore[index]
    assert seen[1] - seen[0] == pytest.approx(0.3)


def test_a_server_that_only_says_429_is_given_up_on_within_the_tests_deadline() -> None:
    """Rate-limit waits do not spend max_retries, but the test's own deadline still ends them."""
    clock = FakeClock()
    seen: list[float] = []

    def respond(request: httpx.Request) -> httpx.Response:
        seen.append(clock.now())
        return httpx.Response(429, headers={"retry-after": "0.1"}, json={})

    async def go() -> None:
        client = _client(clock, httpx.MockTransport(respond))
        try:
            async with asyncio.timeout(0.6):
                await client.post_json("chat/completions", {})
        finally:
            await client.aclose()

    started = clock.now()
    with pytest.raises(TimeoutError):
        clock.run(go())
    assert clock.now() - started == pytest.approx(0.6)  # the deadline, not a retry count, ended it
    assert len(seen) >= 5  # waited 0.1 s and asked again, no retry spent


@pytest.mark.parametrize(("answers_at", "admitted_at"), [((0.1, 0.2), 0.2), ((0.1, 1.0), 0.25)])
def test_a_429_before_any_answer_holds_new_requests_until_those_in_flight_are_back(
    answers_at: tuple[float, ...], admitted_at: float
) -> None:
    """Their pace is the first measure of the limit; they are waited for at most 0.25 s."""
    clock = FakeClock()

    async def go() -> float:
        limiter = TargetLimiter("t", LimitSettings(), clock=clock)
        for _ in range(3):
            await limiter.acquire()
        started = clock.now()
        limiter.release_limited(1.0)  # nothing answered yet: two still in flight

        async def answer(at: float) -> None:
            await clock.sleep(at)
            limiter.release_ok(at)

        answering = [asyncio.ensure_future(answer(at)) for at in answers_at]
        await limiter.acquire()
        admitted = clock.now() - started
        await asyncio.gather(*answering)
        return admitted

    assert clock.run(go()) == pytest.approx(admitted_at)
