"""The callable llm-graders use to ask a grader model (`GraderTargetCaller`).

Which target answers: `--grader-target` > the grader's own `target` (request.target) > the eval
target's `grader_target` / `judge_target` > the eval target itself. Under `--dry-run` a mock answers
AgentV's dry-run JSON (`{"score":1,...,"overall_reasoning":"dry-run mock"}`).

With the response cache on, the runner binds the caller to the answer being graded (`for_answer`):
each call then goes through a `JudgeReplies` store (running/judge_cache.py), keyed on that answer's
test and attempt and on how many times the same request was asked before while grading it, so a
retry after an unreadable reply is a request of its own and repeats stay independent samples.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import msgspec

from agentv_ci.errors import ConfigError
from agentv_ci.model.result import TargetResponse
from agentv_ci.model.suite import Message, Test
from agentv_ci.plugins import GraderTargetRequest, TargetPlugin, TargetRequest
from agentv_ci.prompting import render_input
from agentv_ci.targets.config import MAX_ALIAS_DEPTH, TargetsConfig
from agentv_ci.targets.factory import check_target, create_target
from agentv_ci.targets.mock import DRY_RUN_ANSWER, MockConfig, MockTarget
from agentv_ci.targets.plugin_faults import invoke_target

_GRADER_TEST = Test(id="grader-call")


@dataclass(frozen=True)
class JudgedAnswer:
    """The answer a grader call is about: its test, eval target and attempt keep the judge's replies
    to different answers (and to repeats of one) apart. `reads`: the files the eval file reads."""

    suite: str
    test_id: str
    target: str
    attempt: int
    eval_path: Path
    reads: Sequence[str] = ()


@dataclass(frozen=True)
class JudgeAsk:
    """One grader call, as a reply store keys it: the grader target (`name`, `target`, `targets`),
    the request it gets (`call`, built from `asked`), the answer being graded and `occurrence`, how
    many times the same request was asked before while grading that answer."""

    name: str
    target: TargetPlugin
    targets: TargetsConfig
    call: TargetRequest
    asked: GraderTargetRequest
    answer: JudgedAnswer
    occurrence: int


class JudgeReplies(Protocol):
    """Where grader calls may be answered from instead of sent (the response cache)."""

    async def reply(self, ask: JudgeAsk, send: Callable[[], Awaitable[TargetResponse]]) -> TargetResponse:
        """The stored reply to `ask`, else `await send()` (stored for next time)."""
        ...


class GraderCaller:
    """Calls grader targets by name, creating each once; `aclose()` releases them."""

    def __init__(
        self,
        targets: TargetsConfig,
        *,
        default: str | None,
        override: str | None,
        dry_run: bool,
        on_cost: Callable[[float | None], None] | None = None,
        replies: JudgeReplies | None = None,
        answer: JudgedAnswer | None = None,
        instances: dict[str, TargetPlugin] | None = None,
    ) -> None:
        self.targets = targets
        self.on_cost = on_cost  # told what each grader call cost (the run's budget counts it)
        self.default = default
        self.override = override
        self.dry_run = dry_run
        self.replies = replies
        self.answer = answer
        self._instances: dict[str, TargetPlugin] = {} if instances is None else instances
        self._asked: dict[bytes, int] = {}  # each request's count while grading `answer`
        self._lock = asyncio.Lock()

    def for_answer(self, answer: JudgedAnswer) -> GraderCaller:
        """This caller, its grader targets shared, for grading `answer` (its replies keyed on it)."""
        return GraderCaller(
            self.targets,
            default=self.default,
            override=self.override,
            dry_run=self.dry_run,
            on_cost=self.on_cost,
            replies=self.replies,
            answer=answer,
            instances=self._instances,
        )

    def choose(self, request: GraderTargetRequest) -> str:
        name = self.override or request.target or self.default
        if not name:
            raise ConfigError(
                "an llm-grader needs a grader target but none is configured",
                hint="set `grader_target` on the eval target in targets.yaml, or pass --grader-target NAME",
            )
        return name

    def instance(self, name: str) -> TargetPlugin:
        instance = self._instances.get(name)
        if instance is None:
            if self.dry_run:
                check_target(name, self.targets)  # an unknown grader target fails a dry run too
                config = MockConfig(response=DRY_RUN_ANSWER, dry_run=True)
                instance = MockTarget(name, config, base_dir=self.targets.base_dir)
            else:
                instance = create_target(name, self.targets)
            self._instances[name] = instance
        return instance

    async def __call__(self, request: GraderTargetRequest) -> TargetResponse:
        name = self.choose(request)
        target = self.instance(name)
        messages = list(request.messages)
        if request.system:
            messages.insert(0, Message(role="system", content=request.system))
        # No eval file behind a grader call: a `cli` grader target without `cwd` runs in the project
        # dir (the one holding .agentv/targets.yaml), i.e. the parent of this placeholder path.
        call = TargetRequest(
            test=_GRADER_TEST,
            messages=messages,
            prompt=render_input(messages),
            eval_path=self.targets.base_dir / "grader-call",
        )
        if self.replies is None or self.answer is None:
            return await self._send(target, call)
        asked = msgspec.msgpack.encode((name, messages, request.target, request.temperature), enc_hook=str)
        occurrence = self._asked.get(asked, 0)
        self._asked[asked] = occurrence + 1
        ask = JudgeAsk(name, target, self.targets, call, request, self.answer, occurrence)
        return await self.replies.reply(ask, lambda: self._send(target, call))

    async def _send(self, target: TargetPlugin, call: TargetRequest) -> TargetResponse:
        response = await invoke_target(target, call)
        if self.on_cost is not None:
            self.on_cost(response.cost_usd)
        return response

    async def aclose(self) -> None:
        instances, self._instances = list(self._instances.values()), {}
        for instance in instances:
            await instance.aclose()


def default_grader_target(targets: TargetsConfig, eval_target: str | None) -> str | None:
    """The eval target's `grader_target` (through aliases), else the eval target itself."""
    if eval_target is None:
        return None
    seen = 0
    name: str | None = eval_target
    while name is not None and name in targets.targets and seen <= MAX_ALIAS_DEPTH:
        definition = targets.targets[name]
        if definition.grader_target:
            return definition.grader_target
        name = definition.use_target
        seen += 1
    return eval_target


def make_grader_caller(
    targets: TargetsConfig,
    *,
    eval_target: str | None,
    override: str | None,
    dry_run: bool,
    on_cost: Callable[[float | None], None] | None = None,
    replies: JudgeReplies | None = None,
) -> GraderCaller | None:
    """A `GraderTargetCaller` for one eval target, or None when no grader target can be named
    (a grader that still asks gets a clear error from its own spec). `replies`: the response cache's
    grader-reply store, when the run caches (used once the caller is bound with `for_answer`)."""
    default = default_grader_target(targets, eval_target)
    if not dry_run and override is None and default is None:
        return None
    caller = GraderCaller(
        targets, default=default, override=override, dry_run=dry_run, on_cost=on_cost, replies=replies
    )
    if override is not None:
        caller.instance(override)  # an unknown name or a missing API key fails before any test runs
    return caller
