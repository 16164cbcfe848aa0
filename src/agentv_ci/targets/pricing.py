"""Token prices (USD per million tokens) used to compute `cost_usd` for model APIs.

Extend it per target in targets.yaml (`pricing: {input_per_mtok: 0.5, output_per_mtok: 1.5}`) or
globally from Python with `register_price("my-model", 0.5, 1.5)`. Models are matched by the
longest registered prefix, so `gpt-4o-2024-08-06` uses the `gpt-4o` row.
"""

from __future__ import annotations

import msgspec

from agentv_ci.model.bounds import Usd, UsdPerMtok
from agentv_ci.model.result import TokenUsage


class Price(msgspec.Struct, frozen=True):
    """USD per million tokens; from targets.yaml each is checked to be in 0..10,000 (model/bounds.py),
    since a negative price would make a spend that cancels what the judge cost."""

    input_per_mtok: UsdPerMtok
    output_per_mtok: UsdPerMtok
    cached_input_per_mtok: UsdPerMtok | None = None


class CallPrice(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A cli target's price in targets.yaml (`pricing: {per_call_usd: 0.002}`): per call, plus per
    million tokens of the `token_usage` its output reports. Each is bounded (model/bounds.py)."""

    per_call_usd: Usd | None = None
    input_per_mtok: UsdPerMtok | None = None
    output_per_mtok: UsdPerMtok | None = None

    def cost(self, usage: TokenUsage | None) -> float | None:
        """USD for one call, or None when it cannot be known (token prices and no usage reported)."""
        by_tokens = self.input_per_mtok is not None or self.output_per_mtok is not None
        if by_tokens and usage is None:
            return None
        if not by_tokens and self.per_call_usd is None:
            return None
        total = self.per_call_usd or 0.0
        if usage is not None and by_tokens:
            tokens = usage.input * (self.input_per_mtok or 0.0) + usage.output * (self.output_per_mtok or 0.0)
            total += tokens / 1_000_000
        return total


PRICES: dict[str, Price] = {
    "gpt-4o-mini": Price(0.15, 0.60, 0.075),
    "gpt-4o": Price(2.50, 10.00, 1.25),
    "gpt-4.1-nano": Price(0.10, 0.40, 0.025),
    "gpt-4.1-mini": Price(0.40, 1.60, 0.10),
    "gpt-4.1": Price(2.00, 8.00, 0.50),
    "gpt-5-nano": Price(0.05, 0.40, 0.005),
    "gpt-5-mini": Price(0.25, 2.00, 0.025),
    "gpt-5": Price(1.25, 10.00, 0.125),
    "o3-mini": Price(1.10, 4.40, 0.55),
    "o4-mini": Price(1.10, 4.40, 0.275),
    "o3": Price(2.00, 8.00, 0.50),
    "claude-3-5-haiku": Price(0.80, 4.00, 0.08),
    "claude-haiku-4": Price(1.00, 5.00, 0.10),
    "claude-3-7-sonnet": Price(3.00, 15.00, 0.30),
    "claude-sonnet-4": Price(3.00, 15.00, 0.30),
    "claude-opus-4": Price(15.00, 75.00, 1.50),
    "gemini-2.0-flash-lite": Price(0.075, 0.30),
    "gemini-2.0-flash": Price(0.10, 0.40, 0.025),
    "gemini-2.5-flash-lite": Price(0.10, 0.40, 0.025),
    "gemini-2.5-flash": Price(0.30, 2.50, 0.075),
    "gemini-2.5-pro": Price(1.25, 10.00, 0.31),
}


def register_price(model_prefix: str, input_per_mtok: float, output_per_mtok: float) -> None:
    """Add or replace a row of the global price table."""
    PRICES[model_prefix] = Price(input_per_mtok, output_per_mtok)


def lookup_price(model: str, overrides: Price | None = None) -> Price | None:
    if overrides is not None:
        return overrides
    best: str | None = None
    for prefix in PRICES:
        if model.startswith(prefix) and (best is None or len(prefix) > len(best)):
            best = prefix
    return PRICES[best] if best is not None else None


def cost_of(usage: TokenUsage | None, model: str, overrides: Price | None = None) -> float | None:
    """USD cost of `usage` for `model`, or None when the model has no price."""
    price = lookup_price(model, overrides)
    if usage is None or price is None:
        return None
    cached = usage.cached or 0
    cached_rate = (
        price.cached_input_per_mtok if price.cached_input_per_mtok is not None else price.input_per_mtok
    )
    uncached = max(0, usage.input - cached)
    total = uncached * price.input_per_mtok + cached * cached_rate + usage.output * price.output_per_mtok
    return total / 1_000_000
