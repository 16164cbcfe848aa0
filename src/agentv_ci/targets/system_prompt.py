"""The system prompt AgentV 4.42.4 sends to LLM targets when a test brings none of its own."""

from __future__ import annotations

from agentv_ci.model.suite import Message

DEFAULT_SYSTEM_PROMPT = (
    "You are a careful assistant. Follow all provided instructions and do not fabricate results."
)


def with_default_system(messages: list[Message]) -> list[Message]:
    """`messages`, with AgentV's default system message first when none has role `system`."""
    if any(message.role == "system" for message in messages):
        return messages
    return [Message(role="system", content=DEFAULT_SYSTEM_PROMPT), *messages]
