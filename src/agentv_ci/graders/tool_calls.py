"""The tool calls an answer made, in order (from the output messages)."""

from __future__ import annotations

from agentv_ci.model.result import TargetResponse
from agentv_ci.model.suite import ToolCall


def tool_calls_of(response: TargetResponse) -> list[ToolCall]:
    return [call for message in response.messages for call in (message.tool_calls or [])]


def has_trace(response: TargetResponse) -> bool:
    """Whether the target reported a transcript at all (a plain-text answer has none)."""
    return bool(response.messages) or response.llm_call_count is not None
