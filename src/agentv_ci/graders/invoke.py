"""Running one grader spec safely: build, grade, catch failures, apply `required`/`negate`.

Shared by the test-level engine (`agentv_ci.grading`) and the composite grader's members.
"""

from __future__ import annotations

import time
from pathlib import Path

import msgspec

from agentv_ci.errors import AgentvCiError
from agentv_ci.graders.answer_only import AnswerGrader
from agentv_ci.graders.outcome import checked, errored
from agentv_ci.model.result import GraderResult
from agentv_ci.model.score_range import score_problem
from agentv_ci.model.suite import GraderSpec
from agentv_ci.plugins import GradingContext, build_grader
from agentv_ci.scoring import apply_negate


def own_bar(spec: GraderSpec) -> float | None:
    """The grader's required bar: `min_score`, else a numeric `required` (deprecated), else None."""
    if spec.min_score is not None:
        return spec.min_score
    if type(spec.required) is bool:  # the common case, before the slower checks below
        return None
    if isinstance(spec.required, float | int) and not isinstance(spec.required, bool):
        return float(spec.required)
    return None


async def run_grader_spec(spec: GraderSpec, ctx: GradingContext, *, base_dir: Path) -> GraderResult:
    """Grade one answer with one grader spec. Never raises for a grader problem: a bad config, a
    crash or a timeout becomes a result with `error` set (an execution error, never a made-up score)."""
    started = time.perf_counter()
    try:
        grader = build_grader(spec, base_dir=base_dir)
        result = await grader.grade(ctx)
    except Exception as exc:  # a plugin bug must not stop the other graders or the run
        result = _raised(spec, exc)
    return settle_grader_result(spec, result, started)


def grade_answer_now(spec: GraderSpec, grader: AnswerGrader, output: str) -> GraderResult | None:
    """`run_grader_spec` for a built-in grader that reads the answer's text alone, at once (no
    coroutine, no context); None when it needs `grade` after all (a regex past its inline slice)."""
    started = time.perf_counter()
    try:
        assertion = grader.answer_assertion(output)
    except Exception as exc:  # as run_grader_spec: a failing grader is an error, never a crash
        return settle_grader_result(spec, _raised(spec, exc), started)
    if assertion is None:
        return None
    result = checked(spec, assertion, started)
    if spec.negate or own_bar(spec) is not None:
        return settle_grader_result(spec, result, started)
    return result  # built from the spec, timed: what settling would make of it


def _raised(spec: GraderSpec, exc: Exception) -> GraderResult:
    """The error result of a grader that raised: our own errors say where and why (with their hint),
    anything else (a plugin's bug) its type and message."""
    if not isinstance(exc, AgentvCiError):
        return errored(spec, f"{type(exc).__name__}: {exc}")
    message = f"{exc.location}: {exc.message}" if exc.location else exc.message
    if exc.hint:
        message += f" (hint: {exc.hint})"
    return errored(spec, message)


def settle_grader_result(spec: GraderSpec, result: object, started: float) -> GraderResult:
    """A grader's result held to the contract (a GraderResult with a score in [0, 1], else an error
    naming the grader), with its duration since `started` (perf_counter), the spec's name, weight,
    bar and `negate` applied."""
    if not isinstance(result, GraderResult):
        result = errored(spec, f"grader returned {type(result).__name__}, expected GraderResult")
    elif (
        result.error is None
        and not (type(result.score) is float and 0.0 <= result.score <= 1.0)  # the common case, first
        and (problem := score_problem(result.score)) is not None
    ):
        # The scoring contract holds for every grader, built-in or plugin: a 7 or a NaN is an
        # execution error naming the grader, never a stored score (nor a pass).
        result = errored(spec, f"the {spec.type} grader's {problem} (a score is a finite number in [0, 1])")
    duration_ms = (
        result.duration_ms
        if result.duration_ms is not None
        else round((time.perf_counter() - started) * 1000, 3)
    )
    required, bar = bool(spec.required), own_bar(spec)
    if (
        result.name is spec.name
        and result.weight is spec.weight
        and result.required is required
        and result.min_score is None
        and bar is None
    ):
        # What `check` and `scored` build from the spec (nearly every answer): only the duration is new;
        # compared by identity, so a plugin's equal value of another type (1 for 1.0) is still replaced.
        result = msgspec.structs.replace(result, duration_ms=duration_ms)
    else:
        result = msgspec.structs.replace(
            result,
            name=spec.name,
            weight=spec.weight,
            required=required,
            min_score=bar,
            duration_ms=duration_ms,
        )
    if spec.negate:
        result = apply_negate(result)
    return result
