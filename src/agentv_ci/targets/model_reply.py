"""One model API reply as a `TargetResponse` (shared by the OpenAI-style, Anthropic and Gemini
targets), and the two checks every reply passes first: it is an answer (not a refusal, not empty),
and its token counts are plausible whole numbers."""

from __future__ import annotations

import time

from agentv_ci.errors import TargetError
from agentv_ci.model.result import TargetResponse, TokenUsage
from agentv_ci.model.score_range import count_problem
from agentv_ci.model.suite import Message, ToolCall
from agentv_ci.targets.pricing import Price, cost_of

REFUSAL_SHOWN = 500  # characters of a refusal quoted in the error


def require_answer(
    provider: str, text: str, calls: list[ToolCall], *, stop: str | None, refusal: str | None = None
) -> None:
    """Raise `TargetError` unless the reply is an answer. A refusal is never one; a reply with
    neither text nor tool calls (`content: null`, no content, only whitespace) is none either, and
    is never graded as an empty string. A reply of tool calls alone is an answer (tool-use evals
    grade the calls). `stop` is the provider's stop field as shown, e.g. `finish_reason: length`."""
    if refusal is not None and refusal.strip():
        shown = refusal.strip()
        if len(shown) > REFUSAL_SHOWN:
            shown = shown[:REFUSAL_SHOWN] + "..."
        raise TargetError(f"{provider}: refused: {shown}")
    if not text.strip() and not calls:
        raise TargetError(f"{provider}: the reply had no content" + (f" ({stop})" if stop else ""))


def _count(value: object, provider: str, name: str) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    problem = count_problem(value, name)
    if problem is not None:
        raise TargetError(f"{provider}: the reply's usage is not plausible: {problem}")
    assert isinstance(value, int)
    return value


def reported_usage(
    provider: str, *, input: object, output: object, cached: object = None, reasoning: object = None
) -> TokenUsage:
    """Token counts as the API reported them (`input`/`output` default 0 when absent); a count that
    is not a plausible whole number (negative, 400 digits, text) is the reply's error, never a crash
    while pricing it and never a row that `report` refuses."""
    return TokenUsage(
        input=_count(input or 0, provider, "input tokens"),
        output=_count(output or 0, provider, "output tokens"),
        cached=None if cached is None else _count(cached, provider, "cached tokens"),
        reasoning=None if reasoning is None else _count(reasoning, provider, "reasoning tokens"),
    )


def reply_response(
    text: str,
    calls: list[ToolCall],
    usage: TokenUsage | None,
    *,
    model: str,
    pricing: Price | None,
    started: float,
    reported_cost: float | None = None,
) -> TargetResponse:
    """The assistant turn of one API call, priced for `model` unless the API `reported_cost` itself;
    `started` is a `time.perf_counter()` value."""
    return TargetResponse(
        text=text,
        messages=[Message(role="assistant", content=text, tool_calls=calls or None)],
        token_usage=usage,
        cost_usd=reported_cost if reported_cost is not None else cost_of(usage, model, pricing),
        duration_ms=(time.perf_counter() - started) * 1000,
        llm_call_count=1,
    )
