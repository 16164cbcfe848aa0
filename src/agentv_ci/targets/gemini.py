"""`gemini` (aliases `google`, `google-gemini`): Google's Generative Language API, `generateContent`.

POST `{base_url}/models/{model}:generateContent` with the key in `x-goog-api-key`. System messages go
to `systemInstruction`; assistant turns are `model` turns; tool calls are `functionCall` parts and tool
answers `functionResponse` parts. Usage comes from `usageMetadata` (thinking tokens count as output,
as Google bills them, and are also shown as `reasoning`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote

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

GEMINI_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"
# finishReason values that mean a filter stopped the answer (Google's FinishReason enum)
BLOCKED_FINISH_REASONS = frozenset(
    {"SAFETY", "RECITATION", "LANGUAGE", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"}
)


class GeminiConfig(ModelApiConfig, omit_defaults=True):
    model: str = "gemini-2.5-flash"  # AgentV's default
    base_url: str = GEMINI_BASE_URL


def to_gemini_request(messages: list[Message]) -> dict[str, Any]:
    """`contents` (user/model turns) and `systemInstruction` of a generateContent request."""
    system: list[str] = []
    contents: list[dict[str, Any]] = []
    for message in messages:
        text = content_text(message.content)
        if message.role == "system":
            system.append(text)
            continue
        if message.role == "tool":
            answer = {"name": message.name or message.tool_call_id or "tool", "response": {"content": text}}
            contents.append({"role": "user", "parts": [{"functionResponse": answer}]})
            continue
        parts: list[dict[str, Any]] = [{"text": text}] if text else []
        for call in message.tool_calls or []:
            parts.append({"functionCall": {"name": call.tool, "args": call.input or {}}})
        role = "model" if message.role == "assistant" else "user"
        contents.append({"role": role, "parts": parts or [{"text": ""}]})
    body: dict[str, Any] = {"contents": contents}
    if system:
        body["systemInstruction"] = {"parts": [{"text": "\n\n".join(system)}]}
    return body


def parse_generate_content(body: Any) -> tuple[str, list[ToolCall], TokenUsage | None]:
    """Text, tool calls and usage of a generateContent reply. A blocked prompt, a reply stopped by a
    safety filter (`finishReason: SAFETY` and the like) and one with neither text nor function calls
    (thought summaries are not the answer) raise TargetError."""
    if not isinstance(body, dict):
        raise TargetError(f"malformed Gemini reply (not an object): {str(body)[:200]}")
    candidates = body.get("candidates")
    if not isinstance(candidates, list) or not candidates or not isinstance(candidates[0], dict):
        feedback = body.get("promptFeedback")
        reason = feedback.get("blockReason") if isinstance(feedback, dict) else None
        detail = f"prompt blocked ({reason})" if reason else f"no candidates: {str(body)[:200]}"
        raise TargetError(f"Gemini returned no answer: {detail}")
    candidate = candidates[0]
    reason = candidate.get("finishReason")
    stop = f"finishReason: {reason}" if isinstance(reason, str) else None
    if reason in BLOCKED_FINISH_REASONS:  # stopped by a safety or policy filter: not an answer
        require_answer("gemini", "", [], stop=stop, refusal=f"the reply was blocked ({stop})")
    content = candidate.get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    if not isinstance(parts, list):
        raise TargetError(f"gemini: the reply had no content ({stop or 'no finishReason'})")
    texts: list[str] = []
    calls: list[ToolCall] = []
    for part in parts:
        if not isinstance(part, dict) or part.get("thought"):
            continue  # thought summaries are not the answer
        if isinstance(part.get("text"), str):
            texts.append(part["text"])
        call = part.get("functionCall")
        if isinstance(call, dict):
            calls.append(ToolCall(tool=str(call.get("name", "")), input=call.get("args"), id=call.get("id")))
    text = "".join(texts)
    require_answer("gemini", text, calls, stop=stop)
    return text, calls, _usage(body.get("usageMetadata"))


def _usage(metadata: Any) -> TokenUsage | None:
    if not isinstance(metadata, dict):
        return None
    thoughts = metadata.get("thoughtsTokenCount")
    counted = reported_usage(
        "gemini",
        input=metadata.get("promptTokenCount"),
        output=metadata.get("candidatesTokenCount"),
        cached=metadata.get("cachedContentTokenCount"),
        reasoning=thoughts,
    )
    # Thinking tokens are billed as output: counted there too, and shown as `reasoning`.
    return TokenUsage(
        input=counted.input,
        output=counted.output + (counted.reasoning or 0),
        cached=counted.cached,
        reasoning=counted.reasoning,
    )


class GeminiTarget:
    """Gemini through the Generative Language API: `model`, `api_key` (default `GEMINI_API_KEY`, then
    `GOOGLE_GENERATIVE_AI_API_KEY` and `GOOGLE_API_KEY`), `base_url`, `temperature`, `max_tokens`."""

    Config: ClassVar[type[msgspec.Struct]] = GeminiConfig
    PRICED_BY_TOKENS: ClassVar[bool] = True  # the cost estimate prices its prompts (running/estimate.py)
    API_KEY_ENV: ClassVar[tuple[str, ...]] = (
        "GEMINI_API_KEY",
        "GOOGLE_GENERATIVE_AI_API_KEY",
        "GOOGLE_API_KEY",
    )
    FIELD_ALIASES: ClassVar[Mapping[str, str]] = MODEL_FIELD_ALIASES

    def __init__(self, name: str, config: GeminiConfig, *, base_dir: Path) -> None:
        self.name = name
        self.config = config
        self._path = f"models/{quote(config.model, safe='-._')}:generateContent"
        # lazy: httpx (~0.1 s of start-up) loads only when a model-API target is built, not for the
        # dry run or validate that only read its config class
        from agentv_ci.targets.http import client_for

        self._client = client_for(
            config,
            base_url=config.base_url,
            auth_headers={"x-goog-api-key": config.api_key},
            name=name,
            model=config.model,
        )

    async def invoke(self, request: TargetRequest) -> TargetResponse:
        started = time.perf_counter()
        payload = to_gemini_request(with_default_system(request.messages))
        generation: dict[str, Any] = {}
        if self.config.temperature is not None:
            generation["temperature"] = self.config.temperature
        if self.config.max_tokens is not None:
            generation["maxOutputTokens"] = self.config.max_tokens
        if generation:
            payload["generationConfig"] = generation
        body = await self._client.post_json(self._path, payload, deadline_s=request.timeout_s)
        text, calls, usage = parse_generate_content(body)
        model = str(body.get("modelVersion") or self.config.model)
        return reply_response(text, calls, usage, model=model, pricing=self.config.pricing, started=started)

    async def aclose(self) -> None:
        await self._client.aclose()
