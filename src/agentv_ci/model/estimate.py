"""A run's cost estimate, made before anything is spent (running/estimate.py computes it; docs/running.md
says how and how accurate it is). Recorded in summary.json and shown next to the actual cost."""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["CostEstimate", "EstimateLine", "Span", "merged_estimates"]


class Span(msgspec.Struct, frozen=True, omit_defaults=True):
    """A figure as a range: the low end, the expected value and the high end."""

    low: float = 0.0
    expected: float = 0.0
    high: float = 0.0

    def __add__(self, other: Span) -> Span:
        return Span(self.low + other.low, self.expected + other.expected, self.high + other.high)

    def times(self, low: float, expected: float, high: float) -> Span:
        return Span(self.low * low, self.expected * expected, self.high * high)


class EstimateLine(msgspec.Struct, omit_defaults=True):
    """One target (`role: target`) or grader target (`role: grader`, the llm-graders' judge): how
    many requests it will get, their input and output tokens, and what they cost (None: no price)."""

    role: Literal["target", "grader"]
    target: str
    requests: Span
    input_tokens: Span
    output_tokens: Span
    model: str | None = None
    cached: Span | None = None  # answers the response cache holds: read back, not sent, not paid
    cost_usd: Span | None = None
    # why the cost is unknown or nil: "no price for model x", "not a model API (cli)", "mock (free)"
    note: str | None = None


class CostEstimate(msgspec.Struct, omit_defaults=True):
    """Every line of the estimate and the total cost range (over the lines with a price)."""

    lines: list[EstimateLine]
    cost_usd: Span
    tokenizer: str  # how input tokens were counted: "tiktoken o200k_base" or "chars/4"
    output_source: str  # where expected output tokens came from: the baseline, max_tokens, defaults
    unpriced: list[str] = []  # targets whose cost the estimate leaves out (no price known)


def merged_estimates(estimates: list[CostEstimate]) -> CostEstimate | None:
    """The estimates of shards run apart, added up line by line (`agentv-ci merge`)."""
    if not estimates:
        return None
    lines: dict[tuple[str, str], EstimateLine] = {}
    for estimate in estimates:
        for line in estimate.lines:
            known = lines.get((line.role, line.target))
            if known is None:
                lines[(line.role, line.target)] = msgspec.structs.replace(line)
                continue
            known.requests = known.requests + line.requests
            known.input_tokens = known.input_tokens + line.input_tokens
            known.output_tokens = known.output_tokens + line.output_tokens
            if line.cached is not None:
                known.cached = line.cached if known.cached is None else known.cached + line.cached
            if known.cost_usd is not None and line.cost_usd is not None:
                known.cost_usd = known.cost_usd + line.cost_usd
    total = Span()
    for estimate in estimates:
        total = total + estimate.cost_usd
    first = estimates[0]
    return CostEstimate(
        lines=list(lines.values()),
        cost_usd=total,
        tokenizer=first.tokenizer,
        output_source=first.output_source,
        unpriced=sorted({name for e in estimates for name in e.unpriced}),
    )
