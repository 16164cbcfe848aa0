"""The response cache for grader calls: an llm-grader's (or a code grader's proxy's) request to its
grader target is answered from the cache when the same judge was asked the same thing about the same
answer before (the key: running/cache_keys.py `judge_key`), else sent and kept. Hits and what they
saved are counted apart from the targets' answers (`CacheUse.judge`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from agentv_ci.model.result import TargetResponse
from agentv_ci.plugins import GraderTargetCaller
from agentv_ci.running.budget import Budget
from agentv_ci.running.cache import ResponseCache
from agentv_ci.running.cache_keys import CacheKeys
from agentv_ci.running.plan import Job
from agentv_ci.targets.grader_caller import GraderCaller, JudgeAsk, JudgedAnswer

__all__ = ["JudgeCache"]


class JudgeCache:
    """A `JudgeReplies` store over the run's response cache; `bind` gives each graded answer its
    own caller."""

    def __init__(self, cache: ResponseCache, keys: CacheKeys, budget: Budget) -> None:
        self.cache = cache
        self.keys = keys
        self.budget = budget

    def bind(
        self, caller: GraderTargetCaller | None, job: Job, attempt: int, eval_path: Path
    ) -> GraderTargetCaller | None:
        """`caller`, its calls keyed on the answer to `job`'s `attempt` (a caller this store does not
        back: unchanged)."""
        if not isinstance(caller, GraderCaller) or caller.replies is not self:
            return caller
        suite = job.test.suite or job.suite.name
        answer = JudgedAnswer(suite, job.test.id, job.target, attempt, eval_path, job.suite.dependencies)
        return caller.for_answer(answer)

    async def reply(self, ask: JudgeAsk, send: Callable[[], Awaitable[TargetResponse]]) -> TargetResponse:
        part = self.keys.target_part(ask.target, ask.name, ask.targets)
        key = self.keys.judge_key(part, ask)
        hit = self.cache.get(key, judge=True)
        if hit is not None:
            self.budget.note_cached(hit.cost_usd)  # free now; its recorded cost still prices the attempt
            return hit
        response = await send()
        self.cache.put(key, response)
        return response
