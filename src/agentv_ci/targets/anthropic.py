"""`anthropic`: the Messages API (`/v1/messages`)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agentv_ci.errors import TargetError
from agentv_ci.model.result import TargetResponse, TokenUsage
from agentv_ci.model.suite import Message, ToolCall
from agentv_ci.plugins import TargetRequest
from agentv_ci.prompting import content_text
from agentv_ci.targets.config import MODEL_FIELD_ALIASES
from agentv_ci.targets.model_config import ModelApiConfig
from agentv_ci.targets.model_reply import reply_response, reported_usage, require_answer
from agentv_ci.targets.system_prompt import with_default_system


class AnthropicConfig(ModelApiConfig, omit_defaults=True):
    model: str = "claude-sonnet-4-20250514"
    base_url: str = "https://api.anthropic.com/v1"
    anthropic_version: str = "2023-06-01"
    max_tokens: int = 4096  # the Messages API requires one


def to_anthropic_payload(messages: list[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """System text (separate in this API) and the user/assistant turns."""
    system_parts: list[str] = []
    turns: list[dict[str, Any]] = []
    for message in messages:
        text = content_text(message.content)
        if message.role == "system":
            system_parts.append(text)
            continue
        if message.role == "tool":
            block = {"type": "tool_result", "tool_use_id": message.tool_call_id or "", "content": text}
            turns.append({"role": "user", "content": [block]})
            continue
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        for index, call in enumerate(message.tool_calls or []):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": call.id or f"toolu_{index}",
                    "name": call.tool,
                    "input": call.input or {},
                }
            )
        role = "assistant" if message.role == "assistant" else "user"
        turns.append({"role": role, "content": blocks or text})
    return ("\n\n".join(system_parts) or None), turns


def parse_message(body: Any) -> tuple[str, list[ToolCall], TokenUsage | None]:
    """Text, tool calls and usage of a Messages API reply. A malformed body, a refusal
    (`stop_reason: refusal`) and a reply with neither text nor tool use raise TargetError."""
    if not isinstance(body, dict) or not isinstance(body.get("content"), list):
        raise TargetError(f"malformed Anthropic message (no content list): {str(body)[:200]}")
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in body["content"]:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_use":
            calls.append(
                ToolCall(tool=str(block.get("name", "")), input=block.get("input"), id=block.get("id"))
            )
    text = "".join(texts)
    stop = body.get("stop_reason")
    shown_stop = f"stop_reason: {stop}" if isinstance(stop, str) else None
    if stop == "refusal":  # Claude declined: whatever text came first is not the answer
        require_answer("anthropic", text, calls, stop=shown_stop, refusal=text or shown_stop)
    require_answer("anthropic", text, calls, stop=shown_stop)
    usage_body = body.get("usage")
    usage = None
    if isinstance(usage_body, dict):
        usage = reported_usage(
            "anthropic",
            input=usage_body.get("input_tokens"),
            output=usage_body.get("output_tokens"),
            cached=usage_body.get("cache_read_input_tokens"),
        )
    return text, calls, usage


class AnthropicTarget:
    """Anthropic Messages API with retries, tool use and usage mapped into the response."""

    Config: ClassVar[type[msgspec.Struct]] = AnthropicConfig
    API_KEY_ENV: ClassVar[str] = "ANTHROPIC_API_KEY"
    PRICED_BY_TOKENS: ClassVar[bool] = True  # the cost estimate prices its prompts (running/estimate.py)
    FIELD_ALIASES: ClassVar[Mapping[str, str]] = MODEL_FIELD_ALIASES

    def __init__(self, name: str, config: AnthropicConfig, *, base_dir: Path) -> None:
        self.name = name
        self.config = config
        # lazy: httpx (~0.1 s of start-up) loads only when a model-API target is built, not for the
        # dry run or validate that only read its config class
        from agentv_ci.targets.http import client_for

        self._client = client_for(
            config,
            base_url=config.base_url,
            auth_headers={"x-api-key": config.api_key, "anthropic-version": config.anthropic_version},
            name=name,
            model=config.model,
        )

    async def invoke(self, request: TargetRequest) -> TargetResponse:
        started = time.perf_counter()
        system, turns = to_anthropic_payload(with_default_system(request.messages))
        payload: dict[str, Any] = {
            "model": self.config.model,
            "max_tokens": self.config.max_tokens,
            "messages": turns,
        }
        if system:
            payload["system"] = system
        if self.config.temperature is not None:
            payload["temperature"] = self.config.temperature
        body = await self._client.post_json("messages", payload, deadline_s=request.timeout_s)
        text, calls, usage = parse_message(body)
        model = str(body.get("model") or self.config.model)
        return reply_response(text, calls, usage, model=model, pricing=self.config.pricing, started=started)

    async def aclose(self) -> None:
        await self._client.aclose()
