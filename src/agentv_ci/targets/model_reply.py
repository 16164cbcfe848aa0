"""One model API reply as a `TargetResponse` (shared by the OpenAI/Azure and Anthropic targets)."""

from __future__ import annotations

import time

from agentv_ci.model.result import TargetResponse, TokenUsage
from agentv_ci.model.suite import Message, ToolCall
from agentv_ci.targets.pricing import Price, cost_of


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
