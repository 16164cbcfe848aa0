"""Rendering messages to text, as AgentV does for `{{input}}`, final answers and reference answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from agentv_ci.model.suite import Message


def _block_text(block: Any, *, inline_files: bool) -> str:
    if not isinstance(block, dict):
        return _json_text(block)
    kind = block.get("type")
    value = block.get("value")
    if kind == "text":
        return str(value if value is not None else block.get("text", ""))
    if kind == "file":
        path = str(block.get("path") or value)
        if inline_files:
            try:
                body = Path(path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                body = ""
            return f'<file path="{value}">\n{body}\n</file>'
        return f'<file: path="{path}">'
    if kind == "image":
        return f"<image: {value}>"
    if kind == "json":
        return _json_text(value)
    return _json_text(block)


def _json_text(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def content_text(content: Any, *, inline_files: bool = True) -> str:
    """Text of a message content: a string as-is, blocks joined by newlines, objects as pretty JSON."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(b, dict) and "type" in b for b in content):
        return "\n".join(_block_text(b, inline_files=inline_files) for b in content)
    return _json_text(content)


def render_input(messages: list[Message], *, inline_files: bool = True) -> str:
    """The question text (`{{input}}`): single-turn contents joined; with assistant/tool messages
    present, each message as `@[Role]:` + content, separated by blank lines."""
    conversational = any(m.role in ("assistant", "tool") for m in messages)
    if not conversational:
        return "\n".join(content_text(m.content, inline_files=inline_files) for m in messages)
    parts = [
        f"@[{m.role.capitalize()}]:\n{content_text(m.content, inline_files=inline_files)}" for m in messages
    ]
    return "\n\n".join(parts)


def final_answer(messages: list[Message]) -> str:
    """Text of the last assistant message (the answer graders read)."""
    for message in reversed(messages):
        if message.role == "assistant" and message.content not in (None, ""):
            return content_text(message.content)
    return ""


def reference_answer(expected: list[Message]) -> str:
    """Content of the last expected message (pretty JSON for structured content or tool calls)."""
    if not expected:
        return ""
    last = expected[-1]
    if last.content is None and last.tool_calls:
        return _json_text(msgspec.to_builtins(last.tool_calls))
    if isinstance(last.content, str):
        return last.content
    return content_text(last.content)
