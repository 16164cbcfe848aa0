"""The responses file of `agentv-ci grade`: one recorded answer per JSON line, read into
`TargetResponse`s. A bad line, or a value no results row may hold (an impossible token count, cost,
duration or call count), is a `LoadError` at its file:line."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import msgspec

from agentv_ci.errors import LoadError
from agentv_ci.model.result import TargetResponse, TokenUsage
from agentv_ci.model.score_range import count_problem, shown_number
from agentv_ci.model.source import SourceLocation
from agentv_ci.model.suite import Message, ToolCall
from agentv_ci.prompting import final_answer

__all__ = ["RecordedResponse", "read_responses"]


class RecordedResponse(msgspec.Struct):
    """One line of a `--responses` file: a recorded answer to one test."""

    test_id: str
    response: TargetResponse
    line: int
    target: str | None = None


def _tool_call(raw: Any, where: SourceLocation) -> ToolCall:
    if not isinstance(raw, dict):
        raise LoadError("a tool call must be an object", location=where)
    name = raw.get("tool", raw.get("name"))
    function = raw.get("function")
    if name is None and isinstance(function, dict):
        name, arguments = function.get("name"), function.get("arguments")
        raw = {**raw, "input": json.loads(arguments) if isinstance(arguments, str) else arguments}
    if not isinstance(name, str):
        raise LoadError("a tool call needs a `tool` (or `name`)", location=where)
    fields = {
        k: raw[k] for k in ("id", "status", "start_time", "end_time", "duration_ms", "output") if k in raw
    }
    arguments = raw.get("input", raw.get("args", raw.get("arguments")))
    if isinstance(arguments, str) and arguments.lstrip().startswith("{"):  # OpenAI's JSON-string arguments
        arguments = json.loads(arguments)
    return msgspec.convert({"tool": name, "input": arguments, **fields}, ToolCall)


def _messages(raw: Any, where: SourceLocation) -> list[Message]:
    """Chat messages; their tool calls in any shape `_tool_call` reads (AgentV's or OpenAI's)."""
    if not isinstance(raw, list):
        return msgspec.convert(raw, list[Message])
    messages = []
    for item in raw:
        if isinstance(item, dict) and isinstance(item.get("tool_calls"), list):
            item = {**item, "tool_calls": [_tool_call(c, where) for c in item["tool_calls"]]}
        messages.append(msgspec.convert(item, Message))
    return messages


_USAGE_KEYS = {
    "input": ("input", "input_tokens", "inputTokens", "prompt_tokens"),
    "output": ("output", "output_tokens", "outputTokens", "completion_tokens"),
    "cached": ("cached", "cache_read_input_tokens", "cachedTokens"),
    "reasoning": ("reasoning", "reasoning_tokens", "reasoningTokens"),
}


def _token_usage(raw: Any, where: SourceLocation) -> TokenUsage | None:
    """AgentV's `{input, output, cached, reasoning}` or a provider's spelling (`input_tokens`,
    `prompt_tokens`...). Without an input or output count it is missing data (metric graders fail),
    never a silent zero."""
    if not isinstance(raw, dict):
        return None
    counts = {
        field: next((raw[k] for k in keys if raw.get(k) is not None), None)
        for field, keys in _USAGE_KEYS.items()
    }
    if counts["input"] is None and counts["output"] is None:
        return None
    for name, value in counts.items():
        problem = None if value is None else count_problem(value, f"token_usage.{name}")
        if problem is not None:  # a row `report` would refuse: refused here, where it was written
            raise LoadError(f"invalid response: {problem}", location=where)
    try:
        return msgspec.convert({k: v for k, v in counts.items() if v is not None}, TokenUsage)
    except msgspec.ValidationError as exc:
        raise LoadError(f"invalid response: token_usage: {exc}", location=where) from None


def _measure(data: dict[str, Any], key: str, where: SourceLocation) -> float | None:
    """`cost_usd` / `duration_ms`: absent, or a finite number >= 0 (as the results row holds it)."""
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise LoadError(f"invalid response: {key} {shown_number(value)} is not a number", location=where)
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number) or number < 0:
        raise LoadError(
            f"invalid response: {key} {shown_number(value)} is not a finite number >= 0", location=where
        )
    return number


def _call_count(data: dict[str, Any], where: SourceLocation) -> int | None:
    value = data.get("llm_call_count")
    problem = None if value is None else count_problem(value, "llm_call_count")
    if problem is not None:
        raise LoadError(f"invalid response: {problem}", location=where)
    return value if isinstance(value, int) else None


def _recorded(data: dict[str, Any], where: SourceLocation) -> RecordedResponse:
    test_id = data.get("test_id", data.get("id"))
    if not isinstance(test_id, str) or not test_id:
        raise LoadError("each line needs a `test_id`", location=where)
    text = data.get("output", data.get("text"))
    messages = _messages(data.get("messages") or [], where)
    if isinstance(text, list):  # an AgentV-style output message list
        messages, text = _messages(text, where), None
    if text is not None and not isinstance(text, str):
        text = json.dumps(text, ensure_ascii=False)
    calls = [_tool_call(c, where) for c in data.get("tool_calls") or []]
    if calls:
        messages = [*messages, Message(role="assistant", content="", tool_calls=calls)]
    if text and not any(m.role == "assistant" and m.content for m in messages):
        messages = [*messages, Message(role="assistant", content=text)]
    response = TargetResponse(
        text=text or final_answer(messages),
        messages=messages,
        token_usage=_token_usage(data.get("token_usage"), where),
        cost_usd=_measure(data, "cost_usd", where),
        duration_ms=_measure(data, "duration_ms", where),
        file_changes=data.get("file_changes"),
        llm_call_count=_call_count(data, where),
    )
    target = data.get("target")
    return RecordedResponse(test_id, response, where.line, target if isinstance(target, str) else None)


def _decoded(line: str) -> Any:
    """`json.loads(line)`, by msgspec where it can (the faster decoder): where msgspec decodes a
    line it gives the same value; what it refuses (NaN, 1e400, a lone surrogate, deep nesting, bad
    JSON) json.loads decodes, or refuses with its own message, as before."""
    try:
        return _DECODE(line)
    except (msgspec.DecodeError, RecursionError):  # msgspec's ValidationError is a DecodeError
        return json.loads(line)


_DECODE = msgspec.json.Decoder().decode


def read_responses(path: Path) -> list[RecordedResponse]:
    """Parse a responses JSONL file; a bad line raises `LoadError` at `file:line`."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise LoadError(f"cannot read responses file: {exc}", location=SourceLocation(str(path))) from None
    found: list[RecordedResponse] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = SourceLocation(str(path), number, 1)
        try:
            data = _decoded(line)
        except (ValueError, RecursionError) as exc:
            col = getattr(exc, "colno", 1)
            raise LoadError(
                f"invalid JSON: {exc}",
                location=SourceLocation(str(path), number, col),
                hint="one JSON object per line",
            ) from None
        if not isinstance(data, dict):
            raise LoadError("each line must be a JSON object", location=where)
        try:
            found.append(_recorded(data, where))
        except (msgspec.ValidationError, ValueError) as exc:
            raise LoadError(f"invalid response: {exc}", location=where) from None
    return found
