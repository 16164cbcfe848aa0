"""`ModelApiConfig`: the fields every model-API target (`openai`, `azure`, `openrouter`, `anthropic`,
`gemini`) reads from targets.yaml. Each provider's `Config` subclasses it with its own defaults
(`model`, `base_url`) and its own extra fields."""

from __future__ import annotations

import msgspec

from agentv_ci.model.bounds import Connections, Retries, RetryDelayMs, TimeoutSeconds
from agentv_ci.targets.pricing import Price
from agentv_ci.targets.rate_limits import PositiveCount, PositiveRate


class ModelApiConfig(msgspec.Struct, omit_defaults=True):
    model: str = ""
    api_key: str = ""
    base_url: str = ""
    temperature: float | None = None
    max_tokens: int | None = None
    timeout_seconds: TimeoutSeconds = 120.0
    max_retries: Retries = 2
    retry_initial_delay_ms: RetryDelayMs = 500.0
    retry_max_delay_ms: RetryDelayMs = 30_000.0
    headers: dict[str, str] = {}
    pricing: Price | None = None
    max_connections: Connections = 100
    max_rpm: PositiveRate | None = None  # requests per minute (targets/rate_limits.py)
    max_tpm: PositiveRate | None = None  # tokens per minute
    max_concurrency: PositiveCount | None = None  # requests in flight
