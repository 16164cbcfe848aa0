"""A job's attempts wait on the event loop once each, so a target that answers at once (the real
`mock` provider, a cached answer) cannot starve the loop: other tasks run between attempts, and a
cancel (what SIGINT / SIGTERM do, running/interrupts.py) lands at the next attempt (issue 19)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentv_ci.model.result import TestResult
from agentv_ci.running.plan import PlanOptions, plan_jobs
from agentv_ci.running.scheduler import Runner, RunnerOptions
from tests.running.support import make_suite, write_targets

ATTEMPTS = 100


def _runner(tmp_path: Path, results: list[TestResult]) -> Runner:
    # the mock answers "no" without ever waiting; the test wants "yes": all 100 attempts run
    write_targets(tmp_path, "targets:\n  - name: t\n    provider: mock\n    response: 'no'\n")
    jobs = plan_jobs([make_suite(tmp_path, "s", 1)], PlanOptions(repeat=ATTEMPTS))
    return Runner(jobs, RunnerOptions(workers=1), results.append)


def test_other_tasks_run_between_the_attempts_of_one_job(tmp_path: Path) -> None:
    results: list[TestResult] = []
    runner = _runner(tmp_path, results)

    async def main() -> int:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        task = asyncio.create_task(ticker())
        await runner.run()
        task.cancel()
        return ticks

    ticks = asyncio.run(main())
    assert [r.aggregation.total_attempts for r in results if r.aggregation] == [ATTEMPTS]
    assert ticks >= ATTEMPTS - 1  # the loop turned at every attempt (once in all, before)


def test_a_cancel_lands_at_the_next_attempt(tmp_path: Path) -> None:
    results: list[TestResult] = []
    runner = _runner(tmp_path, results)
    invoked: list[int] = []
    original = runner.run_attempt

    async def counted(job, attempt, fingerprint=None, dependencies=None):  # type: ignore[no-untyped-def]
        invoked.append(attempt)
        return await original(job, attempt, fingerprint, dependencies)

    runner.run_attempt = counted  # type: ignore[method-assign]

    async def main() -> bool:
        run = asyncio.create_task(runner.run())
        while not invoked:  # the job has started
            await asyncio.sleep(0)
        run.cancel()
        try:
            await run
        except asyncio.CancelledError:
            return True
        return False

    assert asyncio.run(main()) is True
    assert len(invoked) <= 2, f"{len(invoked)} attempts ran after the cancel"
    assert results == []  # the job never finished: no row (the session writes it as not_run)
