"""`field-accuracy`: compares fields of a JSON answer with the expected output
(AgentV v4.42.4 `graders/field-accuracy.ts`, plus the seeds' `contains` / `regex` matches and
`minimum` aggregation).

The answer is parsed as JSON (code fences stripped, first `{...}`); the expected object is the content
of the last assistant message of `expected_output` (an object, or JSON text).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal, get_args

import msgspec

from agentv_ci.errors import ConfigError, GraderError
from agentv_ci.graders import regex_search
from agentv_ci.graders.dates import DEFAULT_DATE_FORMATS, parse_date
from agentv_ci.graders.json_values import MISSING, deep_equal, get_path
from agentv_ci.graders.judge_replies import JudgeReplyError, first_json_object
from agentv_ci.graders.outcome import answer_text, scored, shown, shown_text
from agentv_ci.js_semantics.js_calendar import iso_day
from agentv_ci.js_semantics.js_numbers import js_string, parse_float, to_fixed, to_number
from agentv_ci.js_semantics.js_regex import compile_js_regex, js_subject
from agentv_ci.model.result import AssertionResult, GraderResult
from agentv_ci.model.suite import GraderSpec, Message
from agentv_ci.plugins import GradingContext
from agentv_ci.scoring import js_sum

MATCHES = ("exact", "numeric_tolerance", "date", "contains", "regex")
FieldAggregation = Literal["weighted_average", "all_or_nothing", "minimum"]
AGGREGATIONS: tuple[FieldAggregation, ...] = get_args(FieldAggregation)


class FieldAccuracyConfig(msgspec.Struct):
    """`fields`: `[{path, match, required, weight, tolerance, relative, formats, value?, pattern?}]`;
    `aggregation`: weighted_average (default) | all_or_nothing | minimum."""

    fields: list[dict[str, Any]] = []
    # Text, not `FieldAggregation`: our unknown-aggregation error, not msgspec's, must name it.
    aggregation: str = "weighted_average"


@dataclass(frozen=True)
class FieldOutcome:
    score: float
    weight: float
    hit: bool
    message: str
    path: str | None = None
    expected: str | None = None  # what the field should hold, as shown in reports
    actual: str | None = None  # what the answer held


def _js_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object"


def _number(value: Any) -> float | None:
    """AgentV's `toNumber`: a number as is, a string by `parseFloat` (None for NaN), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return to_number(value)
    if isinstance(value, str):
        parsed = parse_float(value)
        return None if math.isnan(parsed) else parsed
    return None


def _tolerance_shown(tolerance: Any) -> str:
    return tolerance if isinstance(tolerance, str) else js_string(tolerance)


def _expected_shown(match: str, field: dict[str, Any], want: Any) -> str:
    """What a field check wanted, as reports show it: the value (JSON), with its tolerance for
    numeric_tolerance, `/pattern/flags` for regex, `contains "…"` for contains."""
    if match == "regex":
        return shown_text(f"/{want}/{field.get('flags') or ''}")
    if match == "contains":
        return "contains " + shown(want)
    if match == "numeric_tolerance":
        tolerance = field.get("tolerance", 0)
        relative = " relative" if field.get("relative") else ""
        return shown(want) + f" (tolerance {shown(tolerance, 20)}{relative})"
    return shown(want)


def expected_object(expected: list[Message]) -> Any:
    for message in reversed(expected):
        if message.role != "assistant" or message.content in (None, ""):
            continue
        if isinstance(message.content, dict):
            return message.content
        if isinstance(message.content, str):
            try:
                return first_json_object(message.content)
            except JudgeReplyError:
                continue
    return None


class FieldAccuracy:
    """`field-accuracy`: per-field exact / numeric-tolerance / date / contains / regex comparison."""

    Config: ClassVar[type[msgspec.Struct]] = FieldAccuracyConfig
    inline: ClassVar[bool] = True  # pure computation: graded without an asyncio task

    def __init__(self, spec: GraderSpec, config: FieldAccuracyConfig, *, base_dir: Path) -> None:
        self.spec = spec
        what = f"field-accuracy grader {spec.name!r}"
        where = spec.config_locations.get("fields", spec.location)
        if not config.fields:
            raise ConfigError(f"{what} needs `fields`", location=where)
        if config.aggregation not in AGGREGATIONS:
            raise ConfigError(
                f"{what}: unknown aggregation {config.aggregation!r}",
                location=spec.location,
                hint=f"use one of {', '.join(AGGREGATIONS)}",
            )
        for field in config.fields:
            if not isinstance(field, dict) or not isinstance(field.get("path"), str):
                raise ConfigError(f"{what}: every field needs a `path`", location=where)
            match = field.get("match", "exact")
            if match not in MATCHES:
                raise ConfigError(
                    f"{what}: field {field['path']!r} has unknown match {match!r}",
                    location=where,
                    hint=f"use one of {', '.join(MATCHES)}",
                )
            if match == "regex":
                pattern = field.get("pattern", field.get("value"))
                if pattern is not None:
                    try:
                        compile_js_regex(str(pattern), field.get("flags"))
                    except ValueError as exc:
                        raise ConfigError(f"{what}: field {field['path']!r}: {exc}", location=where) from None
        self.fields = config.fields
        self.aggregation: FieldAggregation = AGGREGATIONS[AGGREGATIONS.index(config.aggregation)]

    async def grade(self, ctx: GradingContext) -> GraderResult:
        answer = answer_text(ctx.response)
        try:
            candidate: Any = first_json_object(answer)
        except JudgeReplyError:
            unparsed = AssertionResult(
                "Failed to parse candidate answer as JSON",
                False,
                expected="a JSON object",
                actual=shown(answer),
            )
            return scored(self.spec, 0.0, [unparsed])
        expected = expected_object(ctx.test.expected_output)
        needs_expected = any(not self._self_contained(f) for f in self.fields)
        if expected is None and needs_expected:
            return scored(
                self.spec, 0.0, [AssertionResult("No expected data found in expected_output", False)]
            )
        outcomes = [await self._field(f, candidate, expected or {}) for f in self.fields]
        assertions = [
            AssertionResult(o.message, o.hit, expected=o.expected, actual=o.actual, path=o.path)
            for o in outcomes
        ]
        if self.aggregation == "all_or_nothing":
            score = 1.0 if all(o.hit for o in outcomes) else 0.0
        elif self.aggregation == "minimum":
            counted = [o.score for o in outcomes if o.weight > 0]
            score = min(counted) if counted else 1.0
        else:
            total = js_sum(o.weight for o in outcomes)
            score = (
                js_sum(o.score * o.weight for o in outcomes) / total
                if total > 0
                else (0.0 if outcomes else 1.0)
            )
        return scored(self.spec, score, assertions)

    @staticmethod
    def _self_contained(field: dict[str, Any]) -> bool:
        return field.get("match") in ("contains", "regex") and ("value" in field or "pattern" in field)

    async def _field(self, field: dict[str, Any], candidate: Any, expected: Any) -> FieldOutcome:
        path = field["path"]
        match = field.get("match", "exact")
        weight = float(field.get("weight", 1.0))
        required = bool(field.get("required", True))
        want = (
            field.get("pattern", field.get("value"))
            if self._self_contained(field)
            else get_path(expected, path)
        )
        have = get_path(candidate, path)
        where = shown_text(path)
        if want is MISSING:
            return FieldOutcome(1.0, weight, True, f"{path}: no expected value", where)
        expected = _expected_shown(match, field, want)
        if have is MISSING:
            gone = "(missing)"
            if required:
                return FieldOutcome(0.0, weight, False, f"{path} (required, missing)", where, expected, gone)
            return FieldOutcome(1.0, 0.0, True, f"{path}: optional field missing", where, expected, gone)
        hit, message = await self._compare(match, field, path, have, want)
        return FieldOutcome(1.0 if hit else 0.0, weight, hit, message, where, expected, shown(have))

    async def _compare(
        self, match: str, field: dict[str, Any], path: str, have: Any, want: Any
    ) -> tuple[bool, str]:
        if match == "numeric_tolerance":
            a, b = _number(have), _number(want)
            if a is None or b is None:
                return False, f"{path} (non-numeric value)"
            if not (math.isfinite(a) and math.isfinite(b)):
                return False, f"{path} (invalid numeric value)"
            written = field.get("tolerance", 0)
            tolerance = to_number(written)
            diff = abs(a - b)
            relative = bool(field.get("relative", False))
            measured = diff / abs(b) if relative and b != 0 else diff
            # A plain `diff <= tolerance`, as AgentV: no epsilon (100.2 vs 100.1 misses 0.1).
            if measured <= tolerance:
                return True, f"{path} (within tolerance: diff={to_fixed(diff, 2)})"
            return False, (
                f"{path} (outside tolerance: diff={to_fixed(diff, 2)}, tolerance={_tolerance_shown(written)})"
            )
        if match == "date":
            formats = field.get("formats")
            if not isinstance(formats, list):
                formats = list(DEFAULT_DATE_FORMATS)
            got, exp = parse_date(js_string(have), formats), parse_date(js_string(want), formats)
            if got is None:
                return False, f"{path} (unparseable candidate date)"
            if exp is None:
                return False, f"{path} (unparseable expected date)"
            if got == exp:
                return True, path
            return False, f"{path} (date mismatch: got {iso_day(got)}, expected {iso_day(exp)})"
        if match == "contains":
            text = have if isinstance(have, str) else json.dumps(have, ensure_ascii=False)
            needle = want if isinstance(want, str) else json.dumps(want, ensure_ascii=False)
            if needle in text:
                return True, path
            return False, f"{path} (does not contain {needle!r})"
        if match == "regex":
            text = have if isinstance(have, str) else json.dumps(have, ensure_ascii=False)
            pattern = compile_js_regex(str(want), field.get("flags"))
            try:
                found = await regex_search.search(pattern, js_subject(text, field.get("flags")))
            except regex_search.RegexTimeout:
                raise GraderError(
                    f"field-accuracy {self.spec.name!r}: {path}: /{want}/ did not finish within "
                    f"{regex_search.REGEX_BUDGET_S:g}s (catastrophic backtracking?)"
                ) from None
            if found:
                return True, path
            return False, f"{path} (does not match /{want}/)"
        if deep_equal(have, want):
            return True, path
        if _js_type(have) != _js_type(want):
            return False, f"{path} (type mismatch: got {_js_type(have)}, expected {_js_type(want)})"
        return False, f"{path} (value mismatch)"
