"""Metric graders (AgentV `latency`, `cost`, `token-usage`, `execution-metrics`): they read what the
target reported. A missing datum is a failed check with a clear assertion, never a crash or a pass."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import msgspec

from agentv_ci.errors import ConfigError
from agentv_ci.graders.outcome import check, scored
from agentv_ci.graders.tool_calls import has_trace, tool_calls_of
from agentv_ci.model.bounds import Fraction, Usd, WaitMs
from agentv_ci.model.result import AssertionResult, GraderResult, TargetResponse
from agentv_ci.model.suite import GraderSpec
from agentv_ci.plugins import GradingContext

EXPLORATION_TOOLS = frozenset(
    {"read", "grep", "glob", "search", "list", "Read", "Grep", "Glob", "WebSearch", "WebFetch"}
)


def _fmt(value: float) -> str:
    """A number as JavaScript prints it (`1200`, `740.411`), as in AgentV's assertion texts."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return repr(value)


def _usd(value: float) -> str:
    return f"${value:.4f}"


def _at_most(
    label: str, actual: float | None, limit: float, *, missing: str, unit: str = "", bound: str = "max"
) -> AssertionResult:
    """`actual <= limit` as AgentV words it (`Cost $0.0100 <= $0.0500 budget`); `missing` when no datum."""
    if actual is None:
        return AssertionResult(missing, False)
    passed = actual <= limit
    if unit == "$":
        shown, cap = _usd(actual), _usd(limit)
    elif unit == "ms":
        shown, cap = f"{_fmt(round(actual, 3))}ms", f"{_fmt(limit)}ms"
    else:
        shown, cap = f"{_fmt(actual)}{unit}", f"{_fmt(limit)}{unit}"
    return AssertionResult(f"{label} {shown} {'<=' if passed else '>'} {cap} {bound}", passed)


def _required_limit(spec: GraderSpec, value: float | None, *, grader: str, field: str, unit: str) -> float:
    """A grader's single limit, which must be set and >= 0 (else a ConfigError at the grader)."""
    if value is None or value < 0:
        raise ConfigError(
            f"{grader} grader {spec.name!r} needs `{field}` ({unit}, >= 0)", location=spec.location
        )
    return value


class LatencyConfig(msgspec.Struct):
    """`threshold`: the maximum duration in milliseconds."""

    threshold: WaitMs | None = None


class Latency:
    """`latency`: passes when the target's duration is at most `threshold` ms."""

    Config: ClassVar[type[msgspec.Struct]] = LatencyConfig
    inline: ClassVar[bool] = True  # pure computation: graded without an asyncio task

    def __init__(self, spec: GraderSpec, config: LatencyConfig, *, base_dir: Path) -> None:
        self.spec = spec
        self.threshold = _required_limit(
            spec, config.threshold, grader="latency", field="threshold", unit="ms"
        )

    async def grade(self, ctx: GradingContext) -> GraderResult:
        result = _at_most(
            "Duration",
            ctx.response.duration_ms,
            self.threshold,
            missing="No duration data available in trace",
            unit="ms",
            bound="threshold",
        )
        return check(self.spec, result.passed, result.text)


class CostConfig(msgspec.Struct):
    """`budget`: the maximum cost in USD."""

    budget: Usd | None = None


class Cost:
    """`cost`: passes when the target's cost is at most `budget` USD."""

    Config: ClassVar[type[msgspec.Struct]] = CostConfig
    inline: ClassVar[bool] = True  # pure computation: graded without an asyncio task

    def __init__(self, spec: GraderSpec, config: CostConfig, *, base_dir: Path) -> None:
        self.spec = spec
        self.budget = _required_limit(spec, config.budget, grader="cost", field="budget", unit="USD")

    async def grade(self, ctx: GradingContext) -> GraderResult:
        result = _at_most(
            "Cost",
            ctx.response.cost_usd,
            self.budget,
            missing="No cost data available in trace",
            unit="$",
            bound="budget",
        )
        return check(self.spec, result.passed, result.text)


class TokenUsageConfig(msgspec.Struct):
    """At least one of `max_total` (input + output + cached), `max_input`, `max_output`."""

    max_total: int | None = None
    max_input: int | None = None
    max_output: int | None = None


class TokenUsageGrader:
    """`token-usage`: passes when every limit that is set holds."""

    Config: ClassVar[type[msgspec.Struct]] = TokenUsageConfig
    inline: ClassVar[bool] = True  # pure computation: graded without an asyncio task

    def __init__(self, spec: GraderSpec, config: TokenUsageConfig, *, base_dir: Path) -> None:
        if config.max_total is None and config.max_input is None and config.max_output is None:
            raise ConfigError(
                f"token-usage grader {spec.name!r} needs one of max_total, max_input, max_output",
                location=spec.location,
            )
        self.spec = spec
        self.config = config

    async def grade(self, ctx: GradingContext) -> GraderResult:
        usage = ctx.response.token_usage
        if usage is None:
            return check(self.spec, False, "No token usage data available in trace")
        limits = [
            ("Input", usage.input, self.config.max_input),
            ("Output", usage.output, self.config.max_output),
            ("Total", usage.total, self.config.max_total),
        ]
        assertions = [
            AssertionResult(
                f"{name} tokens {actual} {'<=' if actual <= limit else '>'} {limit}", actual <= limit
            )
            for name, actual, limit in limits
            if limit is not None
        ]
        passed = all(a.passed for a in assertions)
        return scored(self.spec, 1.0 if passed else 0.0, assertions)


class ExecutionMetricsConfig(msgspec.Struct):
    """Limits on the run; at least one must be set."""

    max_tool_calls: int | None = None
    max_llm_calls: int | None = None
    max_tokens: int | None = None
    max_input_tokens: int | None = None
    max_output_tokens: int | None = None
    max_cost_usd: Usd | None = None
    max_duration_ms: WaitMs | None = None
    target_exploration_ratio: Fraction | None = None
    exploration_tolerance: Fraction = 0.2


def _llm_calls(response: TargetResponse) -> int | None:
    if response.llm_call_count is not None:
        return response.llm_call_count
    if not response.messages:
        return None
    return sum(1 for m in response.messages if m.role == "assistant")


class ExecutionMetrics:
    """`execution-metrics`: score = fraction of the configured checks that pass (a missing datum fails
    its check). Exploration ratio = read/search-type tool calls / all tool calls, within tolerance."""

    Config: ClassVar[type[msgspec.Struct]] = ExecutionMetricsConfig
    inline: ClassVar[bool] = True  # pure computation: graded without an asyncio task

    def __init__(self, spec: GraderSpec, config: ExecutionMetricsConfig, *, base_dir: Path) -> None:
        limits = [f for f in ExecutionMetricsConfig.__struct_fields__ if f != "exploration_tolerance"]
        if all(getattr(config, f) is None for f in limits):
            raise ConfigError(
                f"execution-metrics grader {spec.name!r} needs at least one of {', '.join(limits)}",
                location=spec.location,
            )
        self.spec = spec
        self.config = config

    @staticmethod
    def _ceiling(
        label: str, actual: float | None, limit: float | None, missing: str, unit: str = ""
    ) -> AssertionResult | None:
        return None if limit is None else _at_most(label, actual, limit, missing=missing, unit=unit)

    async def grade(self, ctx: GradingContext) -> GraderResult:
        response = ctx.response
        config = self.config
        usage = response.token_usage
        calls = tool_calls_of(response) if has_trace(response) else None
        needs_trace = (
            config.max_tool_calls is not None
            or config.max_llm_calls is not None
            or config.target_exploration_ratio is not None
        )
        if needs_trace and calls is None:
            return scored(self.spec, 0.0, [AssertionResult("No trace summary available", False)])
        no_tokens = "Token usage data not available"
        checks = [
            self._ceiling("Tool calls", None if calls is None else len(calls), config.max_tool_calls, ""),
            self._ceiling(
                "LLM calls", _llm_calls(response), config.max_llm_calls, "LLM call count data not available"
            ),
            self._ceiling(
                "Total tokens",
                None if usage is None else usage.input + usage.output,
                config.max_tokens,
                no_tokens,
            ),
            # max_input_tokens / max_output_tokens: the AgentEvals spec's limits (AgentV 4.42.4 has none).
            self._ceiling(
                "Input tokens", None if usage is None else usage.input, config.max_input_tokens, no_tokens
            ),
            self._ceiling(
                "Output tokens", None if usage is None else usage.output, config.max_output_tokens, no_tokens
            ),
            self._ceiling("Cost", response.cost_usd, config.max_cost_usd, "Cost data not available", "$"),
            self._ceiling(
                "Duration", response.duration_ms, config.max_duration_ms, "Duration data not available", "ms"
            ),
        ]
        assertions = [c for c in checks if c is not None]
        if config.target_exploration_ratio is not None:
            target, tolerance = config.target_exploration_ratio, config.exploration_tolerance
            if not calls:
                assertions.append(AssertionResult("Exploration ratio not available (no tool calls)", False))
            else:
                ratio = sum(1 for c in calls if c.tool in EXPLORATION_TOOLS) / len(calls)
                diff = abs(ratio - target)
                if diff <= tolerance:
                    text = f"Exploration ratio {ratio:.2f} within tolerance of target {_fmt(target)}"
                else:
                    text = (
                        f"Exploration ratio {ratio:.2f} outside tolerance of target {_fmt(target)} "
                        f"(diff: {diff:.2f}, tolerance: {_fmt(tolerance)})"
                    )
                assertions.append(AssertionResult(text, diff <= tolerance))
        score = sum(1 for a in assertions if a.passed) / len(assertions)
        return scored(self.spec, score, assertions)
