"""Asking a grader model for a JSON verdict: 3 attempts, then one structure-repair request that quotes
the invalid reply; still unreadable -> `GraderError` (an execution error, never a made-up score)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from agentv_ci.errors import GraderError
from agentv_ci.graders.judge_replies import JudgeReplyError
from agentv_ci.graders.llm_prompts import REPAIR_TEMPLATE
from agentv_ci.graders.outcome import excerpt
from agentv_ci.model.result import TokenUsage
from agentv_ci.model.suite import Message
from agentv_ci.plugins import GraderTargetCaller, GraderTargetRequest
from agentv_ci.prompting import final_answer

ATTEMPTS = 3
T = TypeVar("T")


class JudgeParseError(GraderError):
    """The grader model's replies stayed unreadable after the retries and the repair request."""

    def __init__(self, message: str, *, problem: str) -> None:
        super().__init__(message)
        self.problem = problem


def add_usage(total: TokenUsage | None, extra: TokenUsage | None) -> TokenUsage | None:
    if extra is None:
        return total
    if total is None:
        return TokenUsage(input=extra.input, output=extra.output, cached=extra.cached)
    return TokenUsage(input=total.input + extra.input, output=total.output + extra.output)


def require_caller(caller: GraderTargetCaller | None, what: str) -> GraderTargetCaller:
    if caller is None:
        raise GraderError(
            f"no grader target configured for {what}",
            hint="set `grader_target` on the target in targets.yaml, or pass --grader-target NAME",
        )
    return caller


async def ask_judge(
    caller: GraderTargetCaller,
    prompt: str,
    system: str,
    interpret: Callable[[str, TokenUsage | None], T],
    *,
    what: str,
    target: str | None = None,
    temperature: float | None = None,
) -> T:
    """Ask until `interpret(reply, usage_so_far)` accepts a reply (it raises JudgeReplyError/ValueError
    to reject one)."""
    messages = [Message(role="user", content=prompt)]
    usage: TokenUsage | None = None

    async def ask(conversation: list[Message]) -> str:
        nonlocal usage
        request = GraderTargetRequest(
            messages=conversation, system=system, target=target, temperature=temperature
        )
        response = await caller(request)
        usage = add_usage(usage, response.token_usage)
        return response.text or final_answer(response.messages)

    problem = ""
    reply = ""
    for _ in range(ATTEMPTS):
        reply = await ask(messages)
        try:
            return interpret(reply, usage)
        except (JudgeReplyError, ValueError) as exc:
            problem = str(exc)
    if not reply.strip():
        raise GraderError(f"{what}: the grader model gave no usable reply in {ATTEMPTS} attempts: {problem}")
    # AgentV's structure repair: one fresh request (same system prompt) quoting the invalid reply.
    reply = await ask([Message(role="user", content=REPAIR_TEMPLATE.format(problem=problem, reply=reply))])
    try:
        return interpret(reply, usage)
    except (JudgeReplyError, ValueError) as exc:
        raise JudgeParseError(
            f"{what}: the grader model's reply could not be parsed after {ATTEMPTS} attempts and a repair "
            f"request: {exc}; last reply: {excerpt(reply, 300)!r}",
            problem=str(exc),
        ) from None
