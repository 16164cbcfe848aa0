"""`openai` (chat completions, any OpenAI-compatible server via `base_url`) and `azure`."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agentv_ci.errors import ConfigError, TargetError
from agentv_ci.model.result import TargetResponse, TokenUsage
from agentv_ci.model.suite import Message, ToolCall
from agentv_ci.plugins import TargetRequest
from agentv_ci.prompting import content_text
from agentv_ci.targets.config import MODEL_FIELD_ALIASES
from agentv_ci.targets.model_config import ModelApiConfig
from agentv_ci.targets.model_reply import reply_response, reported_usage, require_answer
from agentv_ci.targets.system_prompt import with_default_system


class OpenAIConfig(ModelApiConfig, omit_defaults=True):
    model: str = "gpt-4o-mini"
    base_url: str = "https://api.openai.com/v1"
    api_format: str = "chat"


class AzureConfig(OpenAIConfig, omit_defaults=True):
    endpoint: str = ""
    deployment: str | None = None
    version: str = "v1"  # "v1" or a dated api-version such as "2024-10-21"


def to_openai_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Our messages as chat-completions messages (tool calls in OpenAI's function shape)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        item: dict[str, Any] = {"role": message.role, "content": content_text(message.content)}
        if message.tool_calls:
            item["tool_calls"] = [
                {
                    "id": call.id or f"call_{index}",
                    "type": "function",
                    "function": {"name": call.tool, "arguments": json.dumps(call.input or {})},
                }
                for index, call in enumerate(message.tool_calls)
            ]
        if message.tool_call_id:
            item["tool_call_id"] = message.tool_call_id
        out.append(item)
    return out


def _parse_arguments(raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def parse_chat_completion(
    body: Any, provider: str = "openai"
) -> tuple[str, list[ToolCall], TokenUsage | None]:
    """Text, tool calls and usage of a chat-completions body. A malformed body, a refusal (the
    `refusal` field, or `finish_reason: content_filter`) and a reply with neither content nor tool
    calls (`content: null`) raise TargetError naming `provider`."""
    try:
        choice = body["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError):
        raise TargetError(f"malformed chat completion (no choices[0].message): {str(body)[:200]}") from None
    if not isinstance(message, dict):
        raise TargetError("malformed chat completion: message is not an object")
    text = message.get("content") or ""
    if not isinstance(text, str):
        text = content_text(text)
    calls = [
        ToolCall(
            tool=str(call.get("function", {}).get("name", "")),
            input=_parse_arguments(call.get("function", {}).get("arguments")),
            id=call.get("id"),
        )
        for call in message.get("tool_calls") or []
        if isinstance(call, dict)
    ]
    finish = choice.get("finish_reason") if isinstance(choice, dict) else None
    refusal = message.get("refusal")
    if finish == "content_filter" and not (isinstance(refusal, str) and refusal.strip()):
        refusal = "the reply was filtered (finish_reason: content_filter)"
    require_answer(
        provider,
        text,
        calls,
        stop=f"finish_reason: {finish}" if isinstance(finish, str) else None,
        refusal=refusal if isinstance(refusal, str) else None,
    )
    usage_body = body.get("usage") if isinstance(body, dict) else None
    usage = None
    if isinstance(usage_body, dict):
        details = usage_body.get("prompt_tokens_details") or {}
        completion = usage_body.get("completion_tokens_details") or {}
        usage = reported_usage(
            provider,
            input=usage_body.get("prompt_tokens"),
            output=usage_body.get("completion_tokens"),
            cached=details.get("cached_tokens") if isinstance(details, dict) else None,
            reasoning=completion.get("reasoning_tokens") if isinstance(completion, dict) else None,
        )
    return text, calls, usage


class OpenAITarget:
    """OpenAI chat completions. `base_url` points it at any OpenAI-compatible server."""

    Config: ClassVar[type[msgspec.Struct]] = OpenAIConfig
    API_KEY_ENV: ClassVar[str] = "OPENAI_API_KEY"
    PROVIDER: ClassVar[str] = "openai"  # names the target kind in a reply's errors
    PRICED_BY_TOKENS: ClassVar[bool] = True  # the cost estimate prices its prompts (running/estimate.py)
    FIELD_ALIASES: ClassVar[Mapping[str, str]] = MODEL_FIELD_ALIASES

    def __init__(self, name: str, config: OpenAIConfig, *, base_dir: Path) -> None:
        if config.api_format != "chat":
            raise ConfigError(
                f"target {name!r}: api_format {config.api_format!r} is not supported",
                hint="use api_format: chat",
            )
        self.name = name
        self.config = config
        self.model = config.model
        # lazy: httpx (~0.1 s of start-up) loads only when a model-API target is built, not for the
        # dry run or validate that only read its config class
        from agentv_ci.targets.http import client_for

        self._client = client_for(
            config,
            base_url=self._base_url(),
            auth_headers=self._auth_headers(),
            name=name,
            model=getattr(config, "deployment", None) or config.model,
        )

    def _base_url(self) -> str:
        return self.config.base_url

    def _auth_headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.config.api_key}"}

    def _path(self) -> tuple[str, dict[str, str] | None]:
        return "chat/completions", None

    def _payload(self, request: TargetRequest) -> dict[str, Any]:
        messages = to_openai_messages(with_default_system(request.messages))
        payload: dict[str, Any] = {"model": self.model, "messages": messages}
        if self.config.temperature is not None:
            payload["temperature"] = self.config.temperature
        if self.config.max_tokens is not None:
            payload["max_tokens"] = self.config.max_tokens
        return payload

    async def invoke(self, request: TargetRequest) -> TargetResponse:
        started = time.perf_counter()
        path, params = self._path()
        body = await self._client.post_json(
            path, self._payload(request), params=params, deadline_s=request.timeout_s
        )
        text, calls, usage = parse_chat_completion(body, self.PROVIDER)
        model = str((body.get("model") if isinstance(body, dict) else None) or self.model)
        return reply_response(
            text,
            calls,
            usage,
            model=model,
            pricing=self.config.pricing,
            started=started,
            reported_cost=self._reported_cost(body),
        )

    def _reported_cost(self, body: Any) -> float | None:
        """The cost the API itself reported (OpenRouter does), else None: the price table decides."""
        return None

    async def aclose(self) -> None:
        await self._client.aclose()


class AzureTarget(OpenAITarget):
    """Azure OpenAI: `endpoint`, `api_key`, `model` (= deployment), `version` (`v1` or an api-version)."""

    Config: ClassVar[type[msgspec.Struct]] = AzureConfig
    API_KEY_ENV: ClassVar[str] = "AZURE_OPENAI_API_KEY"
    PROVIDER: ClassVar[str] = "azure"
    REQUIRED_FIELDS: ClassVar[tuple[str, ...]] = ("endpoint",)
    FIELD_ALIASES: ClassVar[dict[str, str]] = {
        "resource": "endpoint",
        "api_version": "version",
        "max_output_tokens": "max_tokens",
    }
    config: AzureConfig

    def __init__(self, name: str, config: AzureConfig, *, base_dir: Path) -> None:
        if not config.endpoint:
            raise ConfigError(
                f"target {name!r} (azure) needs `endpoint`", hint="endpoint: https://x.openai.azure.com"
            )
        super().__init__(name, config, base_dir=base_dir)
        self.model = config.deployment or config.model  # the v1 API takes the deployment as the model

    def _version(self) -> str:
        """`version` as AgentV reads it: an `api-version=` prefix dropped, empty meaning `v1`."""
        version = re.sub(r"^api[-_]?version\s*=\s*", "", self.config.version.strip(), flags=re.IGNORECASE)
        return version.strip() or "v1"

    def _base_url(self) -> str:
        endpoint = self.config.endpoint.strip().rstrip("/")
        if not re.match(r"^https?://", endpoint, flags=re.IGNORECASE):
            endpoint = f"https://{endpoint}.openai.azure.com"  # a bare resource name, as AgentV allows
        endpoint = re.sub(r"/openai(/v1)?$", "", endpoint)
        if self._version() == "v1":
            return f"{endpoint}/openai/v1"
        return f"{endpoint}/openai/deployments/{self.config.deployment or self.config.model}"

    def _auth_headers(self) -> dict[str, str]:
        return {"api-key": self.config.api_key}

    def _path(self) -> tuple[str, dict[str, str] | None]:
        version = self._version()
        if version == "v1":
            return "chat/completions", None
        return "chat/completions", {"api-version": version}
