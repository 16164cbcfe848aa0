"""Building `GraderResult`s the same way in every built-in grader."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any

from agentv_ci.model.result import AssertionResult, GraderResult, TargetResponse, TokenUsage
from agentv_ci.model.suite import GraderSpec
from agentv_ci.security.redaction import SECRETS, redact
from agentv_ci.security.redaction import excerpt as capped

SHOWN_CHARS = 300  # the most an `expected` / `actual` value keeps (reporters may cut further)

GRADER_PASS_BAR = 0.8  # AgentV: graders (and composite members) judge their own verdict at 0.8


def clamp_score(value: Any) -> float:
    """A number clamped to 0..1 (NaN, None and non-numbers -> 0)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    if math.isnan(number):
        return 0.0
    return min(1.0, max(0.0, number))


def scored(
    spec: GraderSpec,
    score: float,
    assertions: list[AssertionResult],
    *,
    details: dict[str, Any] | None = None,
    verdict: str | None = None,
    token_usage: TokenUsage | None = None,
    target: str | None = None,
) -> GraderResult:
    """A normal result: score clamped, verdict from the 0.8 bar unless given."""
    value = clamp_score(score)
    final_verdict: Any = verdict if verdict in ("pass", "fail", "skip") else None
    if final_verdict is None:
        final_verdict = "pass" if value >= GRADER_PASS_BAR else "fail"
    return GraderResult(
        name=spec.name,
        type=spec.type,
        score=value,
        verdict=final_verdict,
        weight=spec.weight,
        assertions=assertions,
        details=details,
        required=bool(spec.required),
        token_usage=token_usage,
        target=target,
    )


def check(
    spec: GraderSpec,
    passed: bool,
    text: str,
    evidence: str | None = None,
    *,
    expected: str | None = None,
    actual: str | None = None,
) -> GraderResult:
    """A one-assertion pass/fail result (score 1 or 0), as AgentV's deterministic assertions."""
    return checked(spec, AssertionResult(text, passed, evidence, expected, actual), None)


def checked(spec: GraderSpec, assertion: AssertionResult, started: float | None) -> GraderResult:
    """The pass/fail result (score 1 or 0) of one assertion, with the grader's duration since `started`
    (`time.perf_counter()`) when given: built once, not built and then copied with its duration."""
    passed = assertion.passed
    # `scored(spec, 1.0 or 0.0, [assertion])` built directly: 1 and 0 need no clamp, and their verdict
    # against the 0.8 bar is known (this runs for every answer of every text grader).
    return GraderResult(
        name=spec.name,
        type=spec.type,
        score=1.0 if passed else 0.0,
        verdict="pass" if passed else "fail",
        weight=spec.weight,
        assertions=[assertion],
        required=bool(spec.required),
        duration_ms=None if started is None else milliseconds(time.perf_counter() - started),
    )


def milliseconds(seconds: float) -> float:
    """A grader's duration in milliseconds, to the microsecond (rounded as an integer of microseconds:
    `round(x, 3)` goes through a decimal string)."""
    return round(seconds * 1e6) / 1000


# The last string `shown` without secrets and its text: the string is held, so `is` means that string.
_LAST_SHOWN: tuple[object, str] = (None, "")


def shown(value: Any, limit: int = SHOWN_CHARS) -> str:
    """A value as one bounded line for `expected` / `actual`: JSON (a string quoted, its line breaks
    and control characters escaped), cleaned and cut at `limit` characters with the cut marked.
    Secrets are masked in each string before it is quoted (a piece of one at a string's edge too)."""
    if SECRETS:
        value = SECRETS.redact_tree(value)
    elif type(value) is str and limit == SHOWN_CHARS:
        return _shown_string(value)
    if isinstance(value, str):  # as json.dumps(value, ensure_ascii=False) quotes it
        text = encode_basestring(value)
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = repr(value)
    return capped(text, limit)


class ShownOnce:
    """`text()`: `show(value)` (`shown` by default, or `shown_text`) of a value fixed when a grader is
    built (its expected text), computed once and reused while the run knows no secret; with secrets,
    computed each time, so one registered after the build is still masked. Without secrets both depend
    on the value alone."""

    __slots__ = ("_show", "_text", "value")

    def __init__(self, value: Any, show: Callable[[Any], str] | None = None) -> None:
        self.value = value
        self._show = show or shown
        self._text: str | None = None

    def text(self) -> str:
        """The value shown (a method, not `__call__`: called for every answer of a text grader)."""
        if SECRETS:
            return self._show(self.value)
        if self._text is None:
            self._text = self._show(self.value)
        return self._text


def shown_text(text: str, limit: int = SHOWN_CHARS) -> str:
    """Text shown as written (a pattern, a path), cleaned and cut at `limit` characters."""
    return capped(text, limit)


def _shown_string(value: str) -> str:
    """`shown(value)` of a string while the run knows no secret."""
    # Every text grader of a test shows the same answer (the whole of it when it is short).
    global _LAST_SHOWN
    last = _LAST_SHOWN
    if last[0] is value:
        return last[1]
    text = capped(encode_basestring(value), SHOWN_CHARS)
    _LAST_SHOWN = (value, text)  # one tuple: read and replaced whole, never half of it
    return text


def around(text: str, start: int, end: int, context: int = 40) -> str:
    """`shown` of the part of `text` from `context` characters before `start` to as many after `end`,
    with `…` where it was cut: what a search found, in its place."""
    size = len(text)
    lo = start - context if start > context else 0
    hi = end + context if end + context < size else size
    # A secret the window cuts is masked whole. Without secrets, a short answer's window is all of it:
    # the very string, shown once for all its graders.
    part = shown(SECRETS.redact_window(text, lo, hi)) if SECRETS else _shown_string(text[lo:hi])
    if lo == 0 and hi == size:
        return part
    return ("…" if lo > 0 else "") + part + ("…" if hi < size else "")


def skipped(spec: GraderSpec, text: str) -> GraderResult:
    """A grader that did not score (verdict skip, score 0) with one failed assertion saying why."""
    return GraderResult(
        name=spec.name,
        type=spec.type,
        score=0.0,
        verdict="skip",
        weight=spec.weight,
        assertions=[AssertionResult(text, False)],
    )


def errored(
    spec: GraderSpec, message: str, *, details: dict[str, Any] | None = None, text: str | None = None
) -> GraderResult:
    """A grader that could not score: score 0, verdict fail, `error` set (an execution error).
    `text` replaces the default assertion text `Grader '<name>' failed: <message>`."""
    return GraderResult(
        name=spec.name,
        type=spec.type,
        score=0.0,
        verdict="fail",
        weight=spec.weight,
        assertions=[AssertionResult(text=text or f"Grader '{spec.name}' failed: {message}", passed=False)],
        details=details,
        error=message,
        required=bool(spec.required),
    )


def excerpt(text: str, limit: int = 200) -> str:
    """A short quote of `text` for assertion evidence, secrets masked before and after the cut."""
    text = redact(text)
    return text if len(text) <= limit else redact(text[:limit]) + f"... ({len(text)} chars)"


def answer_text(response: TargetResponse) -> str:
    """The final answer graders read: `response.text`, else the last assistant message's text."""
    if response.text:
        return response.text
    # lazy: `prompting` loaded only when `answer_text` runs
    from agentv_ci.prompting import final_answer

    return final_answer(response.messages)
