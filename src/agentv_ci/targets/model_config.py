"""`ModelApiConfig`: the fields every model-API target (`openai`, `azure`, `openrouter`, `anthropic`,
`gemini`) reads from targets.yaml. Each provider's `Config` subclasses it with its own defaults
(`model`, `base_url`) and its own extra fields."""

from __future__ import annotations

import msgspec

from agentv_ci.model.bounds import (
    Concurrency,
    Connections,
    RequestsPerMinute,
    Retries,
    RetryDelayMs,
    Temperature,
    TimeoutSeconds,
    TokensPerMinute,
)
from agentv_ci.targets.pricing import Price
from agentv_ci.targets.retry_policy import DEFAULT_MAX_RETRIES, DEFAULT_RETRY_INITIAL_DELAY_MS


class ModelApiConfig(msgspec.Struct, omit_defaults=True):
    model: str = ""
    api_key: str = ""
    base_url: str = ""
    temperature: Temperature | None = None
    max_tokens: int | None = None
    timeout_seconds: TimeoutSeconds = 120.0
    max_retries: Retries = DEFAULT_MAX_RETRIES  # five attempts (targets/retry_policy.py)
    retry_initial_delay_ms: RetryDelayMs = DEFAULT_RETRY_INITIAL_DELAY_MS
    retry_max_delay_ms: RetryDelayMs = 30_000.0
    headers: dict[str, str] = {}
    pricing: Price | None = None
    max_connections: Connections = 100
    # limits with documented minimums, so a run always ends (targets/rate_limits.py, model/bounds.py)
    max_rpm: RequestsPerMinute | None = None  # requests per minute
    max_tpm: TokensPerMinute | None = None  # tokens per minute
    max_concurrency: Concurrency | None = None  # requests in flight
