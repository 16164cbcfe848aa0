"""`tool-trajectory`: did the agent call the expected tools (AgentV v4.42.4 `graders/tool-trajectory.ts`)?

Modes: `any_order` (+ `minimums: {tool: n}`), `in_order` (greedy forward scan; a same-name call with
wrong args is a miss and is consumed), `exact` (position by position), `superset` (every expected call
appears), `subset` (every actual call is allowed). Expected items: `{tool, args?, max_duration_ms?,
args_match?}`; `args: any` skips argument checks; `args_match`: exact | superset | subset | ignore |
[field paths]. Latency checks count only when the call reported a duration; a call that never
finished (status `unknown`: its end event never came) fails its latency check.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal, get_args

import msgspec

from agentv_ci.errors import ConfigError
from agentv_ci.graders.json_values import MISSING, deep_equal, get_path
from agentv_ci.graders.outcome import scored, shown, shown_text
from agentv_ci.graders.tool_calls import has_trace, tool_calls_of
from agentv_ci.model.result import AssertionResult, GraderResult
from agentv_ci.model.suite import GraderSpec, ToolCall
from agentv_ci.plugins import GradingContext

TrajectoryMode = Literal["any_order", "in_order", "exact", "superset", "subset"]
ArgsMode = Literal["exact", "superset", "subset", "ignore"]
MODES: tuple[TrajectoryMode, ...] = get_args(TrajectoryMode)
ARGS_MODES: tuple[ArgsMode, ...] = get_args(ArgsMode)


class ToolTrajectoryConfig(msgspec.Struct):
    """`mode`, `expected` (list of `{tool, args?, max_duration_ms?, args_match?}`), `minimums`
    (`{tool: min count}`), `args_match` (default for every item)."""

    # Text, not the Literals: our unknown-mode errors, not msgspec's, must name them.
    mode: str = "any_order"
    expected: list[Any] | None = None
    minimums: dict[str, int] | None = None
    args_match: str | list[str] | None = None


@dataclass(frozen=True)
class Expected:
    tool: str
    args: Any  # None = unconstrained, "any" = unconstrained, dict = constrained
    max_duration_ms: float | None
    args_match: ArgsMode | list[str]


def args_match(expected: Any, actual: Any, mode: ArgsMode | list[str]) -> bool:
    if expected is None or expected == "any" or mode == "ignore":
        return True
    if not isinstance(actual, dict):
        return False
    if isinstance(mode, list):
        for field in mode:
            want = get_path(expected, field)
            if want is MISSING:
                continue
            have = get_path(actual, field)
            if have is MISSING or not deep_equal(want, have):
                return False
        return True
    if mode == "superset":
        return all(k in actual and deep_equal(v, actual[k]) for k, v in expected.items())
    if mode == "subset":
        return all(k in expected and deep_equal(v, expected[k]) for k, v in actual.items())
    return deep_equal(expected, actual)


def _wanted(item: Expected) -> str:
    """An expected call as reports show it: `tool(args)`, `tool(...)` when its args are not checked."""
    if item.args is None or item.args == "any" or item.args_match == "ignore":
        return shown_text(f"{item.tool}(...)")
    return shown_text(f"{item.tool}({shown(item.args)})")


def _called(call: ToolCall) -> str:
    """An actual call as reports show it: `tool(args)`."""
    return shown_text(f"{call.tool}({shown(call.input) if call.input is not None else ''})")


def _miss(text: str, item: Expected, actual: str) -> AssertionResult:
    return AssertionResult(text, False, expected=_wanted(item), actual=actual)


def _rest(calls: list[ToolCall], start: int) -> str:
    """The calls from `start` on, by name (what was there instead of the expected call)."""
    names = [call.tool for call in calls[start:]]
    return shown_text("calls: " + ", ".join(names)) if names else "(no further calls)"


def _latency(item: Expected, call: ToolCall) -> tuple[str, str]:
    """('pass'|'fail'|'skip'|'none', message)."""
    if item.max_duration_ms is None:
        return "none", ""
    if call.duration_ms is None and call.status == "unknown":
        # The call never finished (its end event never came): it did not complete within any limit.
        return "fail", (
            f"{item.tool} never finished (status unknown, no duration); "
            f"latency check failed (max: {item.max_duration_ms:g}ms)"
        )
    if call.duration_ms is None:
        return "skip", f"No duration data for {item.tool}; latency assertion skipped"
    if call.duration_ms <= item.max_duration_ms:
        return "pass", f"{item.tool} completed in {call.duration_ms:g}ms (max: {item.max_duration_ms:g}ms)"
    return "fail", f"{item.tool} took {call.duration_ms:g}ms (max: {item.max_duration_ms:g}ms)"


class ToolTrajectory:
    """`tool-trajectory`: checks the sequence / counts / arguments of the agent's tool calls."""

    Config: ClassVar[type[msgspec.Struct]] = ToolTrajectoryConfig
    inline: ClassVar[bool] = True  # pure computation: graded without an asyncio task

    def __init__(self, spec: GraderSpec, config: ToolTrajectoryConfig, *, base_dir: Path) -> None:
        self.spec = spec
        what = f"tool-trajectory grader {spec.name!r}"
        if config.mode not in MODES:
            raise ConfigError(
                f"{what}: unknown mode {config.mode!r}",
                location=spec.location,
                hint=f"use one of {', '.join(MODES)}",
            )
        if config.expected is None and config.minimums is None:  # AgentV skips it; never a silent pass
            raise ConfigError(
                f"{what} needs `expected` or `minimums`: it would check nothing",
                location=spec.location,
                hint="list the calls under `expected:` (or counts under `minimums:` for any_order)",
            )
        self.mode: TrajectoryMode = MODES[MODES.index(config.mode)]
        default_match = self._match_mode(config.args_match, what, spec)
        self.expected = [self._item(raw, default_match, what, spec) for raw in config.expected or []]
        self.minimums = dict(config.minimums or {})

    @staticmethod
    def _match_mode(raw: Any, what: str, spec: GraderSpec) -> ArgsMode | list[str]:
        if raw is None:
            return "exact"
        if isinstance(raw, list) and all(isinstance(f, str) for f in raw):
            return list(raw)
        if raw in ARGS_MODES:
            return ARGS_MODES[ARGS_MODES.index(raw)]
        choices = ", ".join(ARGS_MODES)
        message = f"{what}: args_match must be one of {choices} or a list of field paths"
        raise ConfigError(message, location=spec.location)

    def _item(self, raw: Any, default_match: ArgsMode | list[str], what: str, spec: GraderSpec) -> Expected:
        if isinstance(raw, str):
            raw = {"tool": raw}
        if not isinstance(raw, dict) or not isinstance(raw.get("tool"), str):
            raise ConfigError(f"{what}: every expected item needs a `tool` name", location=spec.location)
        args = raw.get("args", raw.get("input"))
        if args is not None and args != "any" and not isinstance(args, dict):
            raise ConfigError(
                f"{what}: `args` of {raw['tool']!r} must be a mapping or 'any'", location=spec.location
            )
        duration = raw.get("max_duration_ms", raw.get("maxDurationMs"))
        item_match = raw.get("args_match", raw.get("argsMatch"))
        match = self._match_mode(item_match, what, spec) if item_match is not None else default_match
        return Expected(raw["tool"], args, float(duration) if duration is not None else None, match)

    async def grade(self, ctx: GradingContext) -> GraderResult:
        calls = tool_calls_of(ctx.response)
        if not calls and not has_trace(ctx.response):
            return self._result(0.0, [AssertionResult("No trace available for evaluation", False)])
        if self.mode == "any_order":
            return self._any_order(calls)
        if self.mode == "superset":
            return self._superset(calls)
        if self.mode == "subset":
            return self._subset(calls)
        return self._sequence(calls, exact=self.mode == "exact")

    def _result(self, score: float, assertions: list[AssertionResult], **details: Any) -> GraderResult:
        return scored(self.spec, score, assertions, details={"mode": self.mode, **details})

    def _any_order(self, calls: list[ToolCall]) -> GraderResult:
        minimums = self.minimums or dict(Counter(item.tool for item in self.expected))
        if not minimums:
            return self._result(1.0, [AssertionResult("No tool requirements specified", True)])
        counts = Counter(call.tool for call in calls)
        assertions = [
            AssertionResult(
                f"{tool}: called {counts[tool]} times (required >={need})",
                counts[tool] >= need,
                expected=shown_text(f"{tool} called at least {need} time(s)"),
                actual=shown_text(f"{tool} called {counts[tool]} time(s)"),
            )
            for tool, need in minimums.items()
        ]
        return self._result(sum(a.passed for a in assertions) / len(minimums), assertions)

    def _sequence(self, calls: list[ToolCall], *, exact: bool) -> GraderResult:
        if not self.expected:
            return self._result(1.0, [AssertionResult("No tool sequence specified", True)])
        assertions: list[AssertionResult] = []
        warnings: list[str] = []
        hits = latency_hits = latency_skips = 0
        if exact and len(calls) != len(self.expected):
            text = f"Expected {len(self.expected)} tool calls, got {len(calls)}"
            expected = shown_text(", ".join(item.tool for item in self.expected))
            actual = shown_text(", ".join(call.tool for call in calls) or "(no calls)")
            assertions.append(AssertionResult(text, False, expected=expected, actual=actual))
        cursor = 0
        for index, item in enumerate(self.expected):
            matched: ToolCall | None = None
            if exact:
                if index >= len(calls):
                    text = f"Position {index}: expected {item.tool}, got nothing"
                    assertions.append(_miss(text, item, "(no call)"))
                    continue
                call = calls[index]
                if call.tool != item.tool:
                    text = f"Position {index}: expected {item.tool}, got {call.tool}"
                    assertions.append(_miss(text, item, _called(call)))
                elif not args_match(item.args, call.input, item.args_match):
                    text = f"Position {index}: {item.tool} args mismatch"
                    assertions.append(_miss(text, item, _called(call)))
                else:
                    assertions.append(AssertionResult(f"Position {index}: {item.tool}", True))
                    matched = call
            else:
                while cursor < len(calls) and calls[cursor].tool != item.tool:
                    cursor += 1
                if cursor >= len(calls):
                    text = f"Expected {item.tool} at position {index}, not found in remaining trace"
                    assertions.append(_miss(text, item, _rest(calls, 0)))
                elif args_match(item.args, calls[cursor].input, item.args_match):
                    assertions.append(AssertionResult(f"Found {item.tool} at position {cursor}", True))
                    matched = calls[cursor]
                    cursor += 1
                else:
                    text = (
                        f"Expected {item.tool} at position {index}: tool found at {cursor} but args mismatch"
                    )
                    assertions.append(_miss(text, item, _called(calls[cursor])))
                    cursor += 1
            if matched is None:
                continue
            hits += 1
            status, message = _latency(item, matched)
            if status == "pass":
                latency_hits += 1
                assertions.append(AssertionResult(message, True))
            elif status == "fail":
                assertions.append(AssertionResult(message, False))
            elif status == "skip":
                latency_skips += 1
                warnings.append(message)
        latency_checks = sum(1 for item in self.expected if item.max_duration_ms is not None) - latency_skips
        total = len(self.expected) + latency_checks
        score = (hits + latency_hits) / total if total > 0 else 1.0
        return self._result(score, assertions, **({"warnings": warnings} if warnings else {}))

    @staticmethod
    def _hit(item: Expected, call: ToolCall) -> bool:
        return call.tool == item.tool and args_match(item.args, call.input, item.args_match)

    def _superset(self, calls: list[ToolCall]) -> GraderResult:
        if not self.expected:
            return self._result(1.0, [AssertionResult("No expected tools specified", True)])
        consumed: set[int] = set()
        assertions: list[AssertionResult] = []
        for item in self.expected:
            position = next(
                (j for j, call in enumerate(calls) if j not in consumed and self._hit(item, call)), None
            )
            if position is None:
                text = f"Expected {item.tool} not found in actual trajectory"
                assertions.append(_miss(text, item, _rest(calls, 0)))
            else:
                consumed.add(position)
                assertions.append(AssertionResult(f"Found {item.tool} at position {position}", True))
        return self._result(sum(a.passed for a in assertions) / len(self.expected), assertions)

    def _subset(self, calls: list[ToolCall]) -> GraderResult:
        if not self.expected:
            if not calls:
                return self._result(1.0, [AssertionResult("No tool calls and no expected tools", True)])
            text = f"{len(calls)} unexpected tool call(s) with empty allowed list"
            return self._result(0.0, [AssertionResult(text, False)])
        if not calls:
            return self._result(1.0, [AssertionResult("No actual tool calls (trivially a subset)", True)])
        assertions = []
        for index, call in enumerate(calls):
            allowed = any(
                call.tool == item.tool and args_match(item.args, call.input, item.args_match)
                for item in self.expected
            )
            verb = "is" if allowed else "is not"
            text = f"Position {index}: {call.tool} {verb} in allowed set"
            if allowed:
                assertions.append(AssertionResult(text, True))
            else:
                allowed_calls = shown_text(", ".join(_wanted(item) for item in self.expected))
                assertions.append(AssertionResult(text, False, expected=allowed_calls, actual=_called(call)))
        return self._result(sum(a.passed for a in assertions) / len(calls), assertions)
