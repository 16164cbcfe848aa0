"""`openrouter`: OpenRouter's OpenAI-compatible chat completions, with its attribution headers and the
cost it reports per call.

OpenRouter ranks calling apps by `HTTP-Referer` (`site_url`) and `X-Title` (`app_name`); both are
optional. Every request asks for usage accounting (`usage: {include: true}`), so `cost_usd` is what
OpenRouter charged, whatever the model; the price table is used only when a reply carries no cost.
"""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec

from agentv_ci.model.bounds import MAX_USD, within
from agentv_ci.plugins import TargetRequest
from agentv_ci.targets.openai import OpenAIConfig, OpenAITarget

OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"


class OpenRouterConfig(OpenAIConfig, omit_defaults=True):
    model: str = ""  # required: OpenRouter routes by model id (`anthropic/claude-sonnet-4`, ...)
    base_url: str = OPENROUTER_BASE_URL
    site_url: str | None = None  # sent as HTTP-Referer
    app_name: str | None = None  # sent as X-Title


class OpenRouterTarget(OpenAITarget):
    """OpenRouter: `model` (required), `api_key` (default `OPENROUTER_API_KEY`), optional `site_url` and
    `app_name`; every `openai` field applies too."""

    Config: ClassVar[type[msgspec.Struct]] = OpenRouterConfig
    API_KEY_ENV: ClassVar[str] = "OPENROUTER_API_KEY"
    PROVIDER: ClassVar[str] = "openrouter"
    REQUIRED_FIELDS: ClassVar[tuple[str, ...]] = ("model",)
    FIELD_ALIASES: ClassVar[dict[str, str]] = {
        **OpenAITarget.FIELD_ALIASES,
        "http_referer": "site_url",
        "referer": "site_url",
        "x_title": "app_name",
        "title": "app_name",
    }
    config: OpenRouterConfig

    def _auth_headers(self) -> dict[str, str]:
        headers = super()._auth_headers()
        if self.config.site_url:
            headers["HTTP-Referer"] = self.config.site_url
        if self.config.app_name:
            headers["X-Title"] = self.config.app_name
        return headers

    def _payload(self, request: TargetRequest) -> dict[str, Any]:
        payload = super()._payload(request)
        payload["usage"] = {"include": True}
        return payload

    def _reported_cost(self, body: Any) -> float | None:
        usage = body.get("usage") if isinstance(body, dict) else None
        cost = usage.get("cost") if isinstance(usage, dict) else None
        # an answer's number is hostile too: a negative or endless cost would bend the spend
        if isinstance(cost, int | float) and not isinstance(cost, bool) and within(cost, 0, MAX_USD):
            return float(cost)
        return None
