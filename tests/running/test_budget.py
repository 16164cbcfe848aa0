"""`Budget` admission: work in flight counts before it is sent (running/budget.py)."""

from __future__ import annotations

import asyncio

from agentv_ci.running.budget import Budget


async def _attempt(
    budget: Budget, target: str, costs: list[float | None], started: list[str], name: str
) -> None:
    admission = await budget.admit(target)
    if admission is None:
        return
    started.append(name)
    with budget.paying(admission):
        await asyncio.sleep(0.01)

        async def judge(cost: float | None) -> None:  # a grader model paid from a child task
            budget.add(cost)

        for cost in costs:
            await asyncio.create_task(judge(cost))


def test_an_unknown_price_goes_alone_then_in_flight_work_is_reserved() -> None:
    async def scenario() -> tuple[list[str], Budget]:
        budget, started = Budget(2.5), []
        await asyncio.gather(*(_attempt(budget, "t", [0.6, 0.4], started, f"a{i}") for i in range(8)))
        return started, budget

    started, budget = asyncio.run(scenario())
    # $1 an attempt (answer and judge): the first goes alone (no price yet); $1 spent + $1 in flight +
    # $1 next is over $2.5, so one at a time; the third goes alone under the budget: $0.5 over it
    assert budget.spent_usd == 3.0 and len(started) == 3
    assert budget.reached and budget.refused


def test_answers_without_a_price_do_not_hold_the_others_back() -> None:
    async def scenario() -> int:
        budget, started = Budget(1.0), []
        await _attempt(budget, "free", [None], started, "first")
        peak = 0

        async def watch() -> None:
            nonlocal peak
            for _ in range(20):
                peak = max(peak, len(budget._in_flight))
                await asyncio.sleep(0.001)

        await asyncio.gather(watch(), *(_attempt(budget, "free", [None], started, f"a{i}") for i in range(4)))
        assert budget.unpriced == 5 and not budget.reached
        return peak

    assert asyncio.run(scenario()) == 4


def test_a_cached_answer_prices_its_target_and_resume_spend_counts() -> None:
    async def scenario() -> Budget:
        budget = Budget(3.0)
        budget.spent_before = 1.0
        admission = await budget.admit("t")
        assert admission is not None
        with budget.paying(admission):
            budget.note_cached(1.5)  # free now: priced at what it cost when it was made
        assert budget.spent_usd == 0.0
        first = await budget.admit("t")
        assert first is not None
        waiting = asyncio.create_task(budget.admit("t"))
        await asyncio.sleep(0.01)
        assert not waiting.done()  # $1 spent + $1.5 in flight + $1.5 next > $3
        with budget.paying(first):
            budget.add(1.5)
        second = await waiting
        assert second is not None  # nothing in flight, $2.5 < $3: it may go alone
        with budget.paying(second):
            budget.add(1.5)
        assert await budget.admit("t") is None
        return budget

    budget = asyncio.run(scenario())
    assert budget.total_usd == 4.0 and budget.reached
