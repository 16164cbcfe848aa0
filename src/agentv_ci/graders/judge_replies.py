"""Tolerant parsing of grader-model replies (AgentV: strip fences, first `{...}` span, coerce
`"passed": "true"`, validate). A reply that can't be read raises `JudgeReplyError`, never a score."""

from __future__ import annotations

import json
import re
from typing import Any

from agentv_ci.graders.outcome import clamp_score
from agentv_ci.model.result import AssertionResult

MAX_ASSERTIONS = 8
_FENCE = re.compile(r"```[A-Za-z0-9_-]*\s*\n?(.*?)```", re.DOTALL)


class JudgeReplyError(ValueError):
    """The grader model's reply is not the JSON the prompt asked for."""


def first_json_object(text: str) -> dict[str, Any]:
    """The first parseable `{...}` in `text` (inside code fences first), as a dict."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for candidate in candidates:
        start = candidate.find("{")
        while start != -1:
            end = _matching_brace(candidate, start)
            if end is None:
                break
            try:
                value = json.loads(candidate[start : end + 1])
            except ValueError:
                value = None
            if isinstance(value, dict):
                return value
            start = candidate.find("{", start + 1)
    raise JudgeReplyError("no JSON object found in the reply")


def _matching_brace(text: str, start: int) -> int | None:
    depth = 0
    in_string = False
    escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index
    return None


def as_bool(value: Any) -> bool | None:
    """JSON booleans, and the strings/numbers models write instead of them."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in ("true", "yes", "pass", "passed", "1"):
            return True
        if lowered in ("false", "no", "fail", "failed", "0"):
            return False
        return None
    if isinstance(value, int | float):
        return bool(value)
    return None


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool):
        raise JudgeReplyError(f"`{what}` must be a number, got a boolean")
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            raise JudgeReplyError(f"`{what}` must be a number, got {value!r}") from None
    if isinstance(value, int | float):
        return float(value)
    raise JudgeReplyError(f"`{what}` must be a number, got {type(value).__name__}")


def _in_range(value: float, low: float, high: float, what: str) -> float:
    """AgentV's reply schemas bound scores (`min(0).max(1)`, `min(0).max(10)`): outside is an invalid
    reply (retried, then an error), never clamped into a silent score."""
    if not low <= value <= high:
        raise JudgeReplyError(f"`{what}` must be between {low:g} and {high:g}, got {value:g}")
    return value


def parse_freeform(text: str) -> tuple[float, list[AssertionResult], dict[str, Any]]:
    """`{score, assertions[{text, passed, evidence?}], details?}` (or the pre-v3.5
    `{score, hits, misses, reasoning}`) -> (score in 0..1, assertions, details)."""
    data = first_json_object(text)
    if "score" not in data:
        raise JudgeReplyError("the reply has no `score`")
    score = clamp_score(_in_range(_number(data["score"], "score"), 0, 1, "score"))
    assertions: list[AssertionResult] = []
    raw = data.get("assertions")
    if raw is not None and not isinstance(raw, list):
        raise JudgeReplyError("`assertions` must be a list")
    for item in raw or []:
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            continue
        passed = as_bool(item.get("passed"))
        if passed is None:
            raise JudgeReplyError(f"assertion {item['text']!r} has no boolean `passed`")
        evidence = item.get("evidence")
        assertions.append(
            AssertionResult(text=item["text"], passed=passed, evidence=str(evidence) if evidence else None)
        )
    for key, passed in (("hits", True), ("misses", False)):
        for entry in data.get(key) or []:
            if isinstance(entry, str):
                assertions.append(AssertionResult(text=entry, passed=passed))
    details = data.get("details") if isinstance(data.get("details"), dict) else {}
    extra = {k: data[k] for k in ("reasoning", "overall_reasoning", "verdict") if k in data}
    return score, assertions[:MAX_ASSERTIONS], {**extra, **(details or {})}


def parse_checks(text: str, *, scored: bool) -> tuple[list[dict[str, Any]], str | None]:
    """`{checks: [{id, satisfied|score, reasoning}], overall_reasoning?}` -> normalised checks
    (`satisfied` a bool; or `score` an int 0..10)."""
    data = first_json_object(text)
    raw = data.get("checks")
    if not isinstance(raw, list):
        raise JudgeReplyError("the reply has no `checks` list")
    checks: list[dict[str, Any]] = []
    for item in raw:
        if not isinstance(item, dict) or item.get("id") is None:
            continue
        check: dict[str, Any] = {"id": str(item["id"]), "reasoning": str(item.get("reasoning") or "")}
        if scored:
            what = f"checks[{item['id']}].score"
            check["score"] = round(_in_range(_number(item.get("score"), what), 0, 10, what))
        else:
            satisfied = as_bool(item.get("satisfied", item.get("passed")))
            if satisfied is None:
                raise JudgeReplyError(f"check {item['id']!r} has no boolean `satisfied`")
            check["satisfied"] = satisfied
        checks.append(check)
    overall = data.get("overall_reasoning")
    return checks, str(overall) if overall is not None else None
