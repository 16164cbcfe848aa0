"""The rate limiter's phases (targets/rate_limits.py): a limit seen once is probed fast, one two
episodes agree on slowly; a cut leaves the window room for the new pace; near the run's end (the
scheduler's `jobs_left`) the pace stays under what the server answered, and any 429 cuts it. Each
limiter learns its state from a token bucket in virtual time (tests/fakes/virtual_bucket.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentv_ci.running.plan import PlanOptions, plan_jobs
from agentv_ci.running.scheduler import Runner, RunnerOptions
from agentv_ci.targets.limiter_registry import run_progress
from agentv_ci.targets.rate_limits import RunProgress, TargetLimiter
from tests.fakes.virtual_bucket import answer_for, learn
from tests.fakes.virtual_clock import FakeClock
from tests.running.support import CountingTarget, make_suite, write_targets


def test_a_limit_seen_once_is_probed_fast_and_one_two_episodes_agree_on_slowly() -> None:
    """Against a server of 200 requests/s, then 1 s of answers with no limit: after a limit seen
    once (the second episode) the pace doubles; after episodes that agree it grows slowly."""

    def growth(episodes: int) -> float:
        clock = FakeClock()

        async def go() -> float:
            limiter = await learn(clock, 200, episodes=episodes)
            assert limiter.rate is not None
            learned = limiter.rate
            await answer_for(limiter, clock, 1.0, rtt_s=0.05)
            assert limiter.rate is not None
            return limiter.rate / learned

        return clock.run(go())

    assert growth(2) > 1.5  # +100 % a second: an underestimated first limit is left behind fast
    assert growth(4) < 1.2  # +12 % a second: a confirmed limit is approached slowly


def test_a_cut_leaves_the_window_room_for_the_new_pace() -> None:
    """Halving the window below what the pace needs in flight would only send bursts (every answer
    frees a slot at once): the window stays at 1.5 x pace x round trip after a cut."""
    clock = FakeClock()

    async def go() -> TargetLimiter:
        limiter = await learn(clock, 400, episodes=3, rtt_s=0.1)  # a 100 ms round trip
        await answer_for(limiter, clock, 0.1, rtt_s=0.1)  # the pace meets the limit again
        for _ in range(4):
            await limiter.acquire()
        limiter.release_limited(1.0)
        limiter.release_limited(1.0)
        return limiter

    limiter = clock.run(go())
    assert limiter.episodes == 4  # the two 429s cut
    assert limiter.rate is not None and limiter.rate < 400
    assert limiter.window >= 1.5 * limiter.rate * 0.1 - 1  # not 4 / 2 = 2


def test_near_the_end_the_pace_stops_probing_and_stays_under_what_was_answered() -> None:
    clock = FakeClock()

    async def go() -> tuple[float, float, float, int]:
        run = RunProgress(jobs_left=10_000)
        limiter = await learn(clock, 100, episodes=3, run=run)
        await answer_for(limiter, clock, 0.5, rtt_s=0.05)
        assert limiter.rate is not None
        mid_run = limiter.rate
        await answer_for(limiter, clock, 0.5, rtt_s=0.05)
        assert limiter.rate is not None
        probed = limiter.rate
        run.jobs_left = 5  # what is left fits in one server wait
        answered = await answer_for(limiter, clock, 0.5, rtt_s=0.05)
        assert limiter.rate is not None
        return mid_run, probed, limiter.rate, answered

    mid_run, probed, ending, answered = clock.run(go())
    assert probed > mid_run  # mid-run a confirmed limit is still probed (slowly)
    assert ending <= 0.95 * probed  # no probing at the end: under the pace that was limited
    assert ending < mid_run
    assert answered <= 0.5 * 0.95 * probed + 1


def test_near_the_end_a_lone_429_cuts_the_pace() -> None:
    """Mid-run a lone 429 at a learned pace is jitter; at the end its request would wait alone, so
    the pace is cut at once."""

    def lone_429(jobs_left: int) -> tuple[float, float]:
        clock = FakeClock()

        async def go() -> tuple[float, float]:
            run = RunProgress(jobs_left=10_000)
            limiter = await learn(clock, 100, episodes=3, run=run)
            run.jobs_left = jobs_left
            await answer_for(limiter, clock, 0.6, rtt_s=0.05)  # the episode's 429s are past
            assert limiter.rate is not None
            before = limiter.rate
            await limiter.acquire()
            limiter.release_limited(1.0)
            assert limiter.rate is not None
            return before, limiter.rate

        return clock.run(go())

    before, after = lone_429(10_000)
    assert after == before  # mid-run: the pace stands
    before, after = lone_429(3)
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
