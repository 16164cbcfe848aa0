"""The rate limiter's phases (targets/rate_limits.py): a limit seen once is probed fast, one two
episodes agree on slowly; a cut leaves the window room for the new pace; near the run's end (the
scheduler's `jobs_left`) the pace stays under what the server answered, and any 429 cuts it."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from agentv_ci.running.plan import PlanOptions, plan_jobs
from agentv_ci.running.scheduler import Runner, RunnerOptions
from agentv_ci.targets.limiter_registry import run_progress
from agentv_ci.targets.rate_limits import LimitSettings, RunProgress, TargetLimiter
from tests.running.support import CountingTarget, make_suite, write_targets


async def _answer_for(limiter: TargetLimiter, seconds: float) -> None:
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        await limiter.acquire()
        limiter.release_ok(0.05)


def _learned(rate: float, *, confirmed: bool, run: RunProgress | None = None) -> TargetLimiter:
    limiter = TargetLimiter("t", LimitSettings(), run)
    limiter.rate = rate
    limiter._peak = rate
    limiter._confirmed = confirmed
    limiter._probing = False
    return limiter


def test_a_limit_seen_once_is_probed_fast_and_one_two_episodes_agree_on_slowly() -> None:
    async def go() -> tuple[float, float]:
        once = _learned(200.0, confirmed=False)
        agreed = _learned(200.0, confirmed=True)
        await _answer_for(once, 0.4)
        await _answer_for(agreed, 0.4)
        assert once.rate is not None and agreed.rate is not None
        return once.rate, agreed.rate

    once, agreed = asyncio.run(go())
    assert once > 1.2 * 200  # +100 % a second: an underestimated first limit is left behind fast
    assert agreed < 1.08 * 200  # +12 % a second: a confirmed limit is approached slowly


def test_two_episodes_at_about_the_same_pace_confirm_the_limit() -> None:
    async def go() -> list[bool]:
        limiter = _learned(300.0, confirmed=False)
        limiter._peak = None
        seen = []
        for _ in range(3):
            await _answer_for(limiter, 0.3)
            await limiter.acquire()
            await limiter.acquire()
            limiter.release_limited(1.0)
            limiter.release_limited(1.0)  # two 429s: an episode
            seen.append(limiter._confirmed)
        return seen

    seen = asyncio.run(go())
    assert seen[0] is False  # the first episode: a limit seen once
    assert seen[-1] is True  # later ones at about the same pace confirm it


def test_a_cut_leaves_the_window_room_for_the_new_pace() -> None:
    """Halving the window below what the pace needs in flight would only send bursts (every answer
    frees a slot at once): the window stays at 1.5 x pace x round trip after a cut."""

    async def go() -> TargetLimiter:
        limiter = _learned(400.0, confirmed=True)
        for _ in range(20):
            await limiter.acquire()
            limiter.release_ok(0.1)  # a 100 ms round trip
        for _ in range(4):
            await limiter.acquire()
        limiter.release_limited(1.0)
        limiter.release_limited(1.0)
        return limiter

    limiter = asyncio.run(go())
    assert limiter.rate is not None and limiter.rate < 400  # cut
    assert limiter.window >= 1.5 * limiter.rate * 0.1 - 1  # not 4 / 2 = 2


def test_near_the_end_the_pace_stops_probing_and_stays_under_what_was_answered() -> None:
    async def go() -> tuple[float, float, bool]:
        run = RunProgress(jobs_left=10_000)
        limiter = _learned(100.0, confirmed=True, run=run)
        await _answer_for(limiter, 0.5)
        assert limiter.rate is not None
        mid_run = limiter.rate
        run.jobs_left = 5  # what is left fits in one server wait
        await _answer_for(limiter, 0.5)
        assert limiter.rate is not None
        return mid_run, limiter.rate, limiter._ending

    mid_run, ending, flag = asyncio.run(go())
    assert mid_run > 100.0  # mid-run a confirmed limit is still probed (slowly)
    assert flag
    assert ending <= 0.95 * 100.0  # no probing at the end: under the pace that was limited
    assert ending < mid_run


def test_near_the_end_a_lone_429_cuts_the_pace() -> None:
    """Mid-run a lone 429 at a learned pace is jitter; at the end its request would wait alone, so
    the pace is cut at once."""

    async def go(jobs_left: int) -> tuple[float, float]:
        limiter = _learned(100.0, confirmed=True, run=RunProgress(jobs_left=jobs_left))
        await _answer_for(limiter, 0.3)
        assert limiter.rate is not None
        before = limiter.rate
        await limiter.acquire()
        limiter.release_limited(1.0)
        assert limiter.rate is not None
        return before, limiter.rate

    before, after = asyncio.run(go(10_000))
    assert after == before  # mid-run: the pace stands
    before, after = asyncio.run(go(3))
    assert after < before  # at the end: cut


def test_the_scheduler_tells_the_limiters_how_many_jobs_are_left(tmp_path: Path) -> None:
    write_targets(tmp_path, "targets:\n  - name: t\n    provider: counting\n    delay_s: 0.01\n")
    suites = [make_suite(tmp_path, "alpha", 5), make_suite(tmp_path, "beta", 5)]
    seen: list[int | None] = []
    original = CountingTarget.invoke

    async def invoke(self: CountingTarget, request):  # type: ignore[no-untyped-def]
        seen.append(run_progress().jobs_left)
        return await original(self, request)

    CountingTarget.reset()
    CountingTarget.invoke = invoke  # type: ignore[method-assign]
    try:
        runner = Runner(plan_jobs(suites, PlanOptions()), RunnerOptions(workers=2), lambda r: None)
        asyncio.run(runner.run())
    finally:
        CountingTarget.invoke = original  # type: ignore[method-assign]
    assert len(seen) == 10
    assert seen[0] is not None and seen[0] >= 8  # 10 jobs, at most the 2 workers' first taken
    assert seen == sorted(seen, key=lambda n: -(n or 0))  # it only goes down
    assert seen[-1] == 0
