"""Input / expected-output normalisation (AgentV `shorthand-expansion`) with file blocks resolved."""

from __future__ import annotations

from typing import Any

from agentv_ci.loading.context import LoadContext, Node, did_you_mean, type_name
from agentv_ci.loading.keys import BLOCK_TYPES, MESSAGE_KEYS, ROLES
from agentv_ci.loading.paths import resolve_reference
from agentv_ci.model.suite import Message, ToolCall

BLOCK_KEYS = frozenset({"type", "value", "text", "path", "media_type", "mime_type", "detail"})

# AgentV's validator warns about these inside message content: agentic providers render transcripts with
# them, so a literal marker in a prompt can fake a turn (prompt injection) or confuse the provider.
ROLE_MARKERS = ("@[System]:", "@[User]:", "@[Assistant]:", "@[Tool]:")


def check_role_markers(text: str, node: Node, ctx: LoadContext) -> None:
    """W107 for every role marker (any case) inside a content string."""
    if "@[" not in text:
        return
    lowered = text.lower()
    for marker in ROLE_MARKERS:
        if marker.lower() in lowered:
            ctx.warn(
                "W107",
                f"content contains the role marker `{marker}`",
                node,
                hint="it may confuse agentic providers or act as a prompt injection; rephrase it, "
                "or use separate messages with `role:` for a scripted conversation",
            )


def _is_message(value: Any) -> bool:
    return isinstance(value, dict) and "role" in value


def _block(block: Any, node: Node, ctx: LoadContext) -> Any:
    if not isinstance(block, dict):
        return block
    kind = block.get("type")
    if "type" not in block:
        ctx.error("E102", "content block is missing `type`", node, hint=f"one of: {', '.join(BLOCK_TYPES)}")
        return block
    if kind not in BLOCK_TYPES:
        suggestion = did_you_mean(str(kind), BLOCK_TYPES)
        ctx.error(
            "E103",
            f"unknown content block type {kind!r}",
            node.child("type"),
            hint=f"did you mean `{suggestion}`?" if suggestion else f"one of: {', '.join(BLOCK_TYPES)}",
        )
        return block
    ctx.check_keys(block, node, BLOCK_KEYS, "a content block")
    if "value" not in block and not (kind == "text" and "text" in block):
        ctx.error("E102", f"`{kind}` content block is missing `value`", node)
        return block
    if kind == "text":
        key = "value" if "value" in block else "text"
        if isinstance(block[key], str):
            check_role_markers(block[key], node.child(key), ctx)
    if kind == "file":
        value = block["value"]
        if not isinstance(value, str):
            ctx.error(
                "E101", f"file block value must be a string, got {type_name(value)}", node.child("value")
            )
            return block
        path = resolve_reference(value, node.base_dir, ctx.repo_root)
        ctx.depend(path)
        if not ctx.confined(path, node.child("value"), value):
            return block  # not read: E305 stops the run before any prompt is built
        if not path.is_file():
            ctx.error(
                "E301",
                f"file not found: {value}",
                node.child("value"),
                hint=f"resolved relative to {node.base_dir} (leading `/` = repo root)",
            )
        return {**block, "path": str(path)}
    return block


def _content(content: Any, node: Node, ctx: LoadContext) -> Any:
    if isinstance(content, str):
        check_role_markers(content, node, ctx)
    elif isinstance(content, list):
        for i, item in enumerate(content):
            if isinstance(item, str):
                check_role_markers(item, node.child(i), ctx)
        if all(isinstance(b, dict) for b in content):
            return [_block(b, node.child(i), ctx) for i, b in enumerate(content)]
    return content


def _tool_calls(raw: Any, node: Node, ctx: LoadContext) -> list[ToolCall] | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        ctx.error("E101", f"tool_calls must be a list, got {type_name(raw)}", node)
        return None
    calls: list[ToolCall] = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            ctx.error("E101", f"a tool call must be a mapping, got {type_name(item)}", node.child(i))
            continue
        if "tool" in item:
            name, args = item.get("tool"), item.get("input", item.get("args"))
        elif isinstance(item.get("function"), dict):  # OpenAI shape
            name, args = item["function"].get("name"), item["function"].get("arguments")
        else:
            name, args = item.get("name"), item.get("input", item.get("arguments"))
        if not isinstance(name, str):
            ctx.error("E102", "tool call is missing its tool name (`tool`)", node.child(i))
            continue
        calls.append(
            ToolCall(
                tool=name,
                input=args,
                output=item.get("output"),
                id=item.get("id") if isinstance(item.get("id"), str) else None,
            )
        )
    return calls


def message(raw: dict[str, Any], node: Node, ctx: LoadContext) -> Message | None:
    role = raw.get("role")
    if role not in ROLES:
        ctx.error(
            "E103",
            "message is missing `role`" if role is None else f"invalid message role {role!r}",
            node.child("role"),
            hint=f"one of: {', '.join(ROLES)}",
        )
        return None
    ctx.check_keys(raw, node, MESSAGE_KEYS, "a message")
    content = raw.get("content")
    tool_calls = _tool_calls(raw.get("tool_calls"), node.child("tool_calls"), ctx)
    name = raw.get("name")
    tool_call_id = raw.get("tool_call_id")
    return Message(
        role=role,
        content=_content(content, node.child("content"), ctx),
        tool_calls=tool_calls,
        name=name if isinstance(name, str) else None,
        tool_call_id=tool_call_id if isinstance(tool_call_id, str) else None,
    )


def normalise_input(raw: Any, node: Node, ctx: LoadContext) -> list[Message]:
    """String -> one user message; mapping without `role` -> user message with structured content;
    a message -> itself; a list -> its messages."""
    if raw is None:
        return []
    if isinstance(raw, str):
        check_role_markers(raw, node, ctx)
        return [Message(role="user", content=raw)]
    if isinstance(raw, dict):
        if _is_message(raw):
            msg = message(raw, node, ctx)
            return [msg] if msg else []
        return [Message(role="user", content=raw)]
    if isinstance(raw, list):
        out: list[Message] = []
        for i, item in enumerate(raw):
            if isinstance(item, dict) and "role" in item:
                msg = message(item, node.child(i), ctx)
                if msg:
                    out.append(msg)
            elif isinstance(item, str):
                check_role_markers(item, node.child(i), ctx)
                out.append(Message(role="user", content=item))
            else:
                ctx.error(
                    "E101",
                    f"input items must be messages (mapping with `role`), got {type_name(item)}",
                    node.child(i),
                )
        return out
    ctx.error("E101", f"input must be a string, a message or a list of messages, got {type_name(raw)}", node)
    return []


def normalise_expected(raw: Any, node: Node, ctx: LoadContext) -> list[Message]:
    """String -> one assistant message; messages kept; anything else -> one assistant message whose
    content is the structured value."""
    if raw is None:
        return []
    if isinstance(raw, str):
        check_role_markers(raw, node, ctx)
        return [Message(role="assistant", content=raw)]
    if isinstance(raw, dict) and _is_message(raw):
        msg = message(raw, node, ctx)
        return [msg] if msg else []
    if isinstance(raw, list) and raw and all(_is_message(item) for item in raw):
        out = [message(item, node.child(i), ctx) for i, item in enumerate(raw)]
        return [m for m in out if m is not None]
    return [Message(role="assistant", content=raw)]


def file_message(files: list[str], text: str | None) -> Message:
    blocks: list[Any] = [{"type": "file", "value": f, "path": f} for f in files]
    if text is not None:
        blocks.append({"type": "text", "value": text})
    return Message(role="user", content=blocks)
