"""Grading one answer to one test: run its graders concurrently and apply the scoring contract."""

from __future__ import annotations

import asyncio
import functools
import os
from pathlib import Path

from agentv_ci.clock import now_millis
from agentv_ci.errors import ConfigError
from agentv_ci.graders.answer_graders import AnswerGraders
from agentv_ci.graders.answer_only import AnswerGrader, answer_grader
from agentv_ci.graders.invoke import run_grader_spec
from agentv_ci.graders.outcome import answer_text
from agentv_ci.model.result import (
    DependencyResult,
    ExecutionStatus,
    GraderResult,
    TargetResponse,
    TestResult,
    Verdict,
)
from agentv_ci.model.score_range import usage_problem
from agentv_ci.model.suite import GraderSpec, Message, Test
from agentv_ci.plugins import (
    GRADERS_NAMESPACE,
    GraderTargetCaller,
    GradingContext,
    build_grader,
    load_plugin_class,
)
from agentv_ci.prompting import render_input
from agentv_ci.scoring import combine_grader_results

__all__ = [
    "IMPLICIT_GRADER_NAME",
    "OUTPUT_CAP",
    "answer_graders",
    "grade_now",
    "grade_test",
    "graded_row",
    "graders_for",
    "relative_eval_path",
]

OUTPUT_CAP = 20_000
INPUT_CAP = 2_000
IMPLICIT_GRADER_NAME = "llm-grader"


def graders_for(test: Test) -> list[GraderSpec]:
    """The test's graders; when it declares none, AgentV's implicit llm-grader, which judges the answer
    against `criteria` and the reference answer (`expected_output`). `validate` reports a test with
    neither (E112), so a test that runs is never left without a grader."""
    if test.graders:
        return list(test.graders)
    if test.criteria or test.expected_output:
        return [GraderSpec(type="llm-grader", name=IMPLICIT_GRADER_NAME, location=test.location)]
    return []


def _cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n... [truncated: {len(text)} chars in total]"


def relative_eval_path(eval_path: Path) -> str:
    """The eval path relative to the working directory when it lies below it (stable in CI)."""
    return _relative_eval_path(str(eval_path), os.getcwd())


@functools.lru_cache(maxsize=4096)
def _relative_eval_path(eval_path: str, cwd: str) -> str:
    # Cached: every result of a suite shares its path, and resolving costs filesystem calls.
    resolved = Path(eval_path).resolve()
    try:
        return str(resolved.relative_to(Path(cwd).resolve()))
    except ValueError:
        return str(resolved)


@functools.lru_cache(maxsize=1024)
def _directory_of(eval_path: Path) -> Path:
    # One Path object per eval file: a grader's build is found by (spec, directory), and hashing a
    # new Path for every answer cost more than grading it.
    return eval_path.parent


def _runs_inline(spec: GraderSpec) -> bool:
    """True for graders that declare `inline = True` (pure computation, no I/O to overlap)."""
    inline = _INLINE_TYPES.get(spec.type)
    if inline is None:
        try:
            cls = load_plugin_class(GRADERS_NAMESPACE, spec.type)
        except ConfigError:
            return True  # run_grader_spec reports the broken plugin as this grader's error
        inline = _INLINE_TYPES[spec.type] = bool(getattr(cls, "inline", False))
    return inline


# type -> whether its class runs inline; a class, once loaded, stays what it is for the process.
_INLINE_TYPES: dict[str, bool] = {}


def _input_text(messages: list[Message]) -> str:
    """`render_input(messages, inline_files=False)`; one plain question (the common case) is its text."""
    if len(messages) == 1:
        only = messages[0]
        if type(only.content) is str and only.role not in ("assistant", "tool"):
            return only.content
    return render_input(messages, inline_files=False)


def _skipped_graders_error(skipped: list[GraderResult]) -> str:
    """AgentV's wording: `name: why` for one skipped grader, `Graders skipped: a | b` for several."""
    messages = [
        f"{r.name or r.type}: {next((a.text for a in r.assertions if not a.passed), 'Grader skipped')}"
        for r in skipped
    ]
    return messages[0] if len(messages) == 1 else "Graders skipped: " + " | ".join(messages)


async def grade_test(
    test: Test,
    response: TargetResponse,
    *,
    target: str,
    eval_path: Path,
    threshold: float,
    call_grader_target: GraderTargetCaller | None = None,
    dry_run: bool = False,
    attempt: int = 0,
    workspace_path: Path | None = None,
    dependency_results: dict[str, DependencyResult] | None = None,
    shown_eval_path: str | None = None,
) -> TestResult:
    """Grade `response` with every grader of `test` (concurrently) and fill a `TestResult`.

    `shown_eval_path`: `relative_eval_path(eval_path)`, when the caller has it (once per suite).

    A grader that errors (bad config, crash, timeout, unparseable judge) makes the test an
    `execution_error` with score 0: an error is never reported as a low score.
    """
    ctx = GradingContext(
        test=test,
        response=response,
        threshold=threshold,
        eval_path=eval_path,
        target=target,
        call_grader_target=call_grader_target,
        workspace_path=workspace_path,
        dry_run=dry_run,
        attempt=attempt,
        dependency_results=dependency_results,
    )
    base_dir = _directory_of(eval_path)
    specs = graders_for(test)
    awaiting = 0
    for spec in specs:
        if not _runs_inline(spec):
            awaiting += 1
    if awaiting <= 1:
        # Nothing to overlap: awaiting in turn skips a task and its callbacks per grader.
        results = [await run_grader_spec(s, ctx, base_dir=base_dir) for s in specs]
    else:
        results = list(await asyncio.gather(*(run_grader_spec(s, ctx, base_dir=base_dir) for s in specs)))
    shown = shown_eval_path if shown_eval_path is not None else relative_eval_path(eval_path)
    return graded_row(
        test,
        response,
        results,
        target=target,
        threshold=threshold,
        dry_run=dry_run,
        attempt=attempt,
        eval_path=shown,
        suite=test.suite,
        graded=bool(specs),
    )


def answer_graders(test: Test, eval_path: Path) -> AnswerGraders | None:
    """The test's graders, built, when every one grades the answer's text alone (`grade_now`);
    else None (a grader that reads more, a plugin, or one that does not build: `grade_test` grades,
    or reports, it)."""
    specs = graders_for(test)
    if not specs:
        return None
    base_dir = _directory_of(eval_path)
    graders: list[tuple[GraderSpec, AnswerGrader]] = []
    for spec in specs:
        try:
            grader = answer_grader(build_grader(spec, base_dir=base_dir))
        except Exception:
            return None
        if grader is None:
            return None
        graders.append((spec, grader))
    return AnswerGraders(graders)


def grade_now(
    test: Test,
    response: TargetResponse,
    graders: AnswerGraders,
    *,
    target: str,
    threshold: float,
    dry_run: bool,
    eval_path: str,
    suite: str,
    fingerprint: str | None = None,
    started_at: str | None = None,
    attempt: int = 0,
) -> TestResult | None:
    """`grade_test` with `answer_graders`, at once; a run's row finished as the runner finishes it
    (`fingerprint` and `started_at` given), `grade`'s as `grade_test` leaves it (neither). None when
    a grader needs awaiting after all."""
    output = answer_text(response)
    graded = graders.grade(output, threshold)
    if graded is None:
        return None
    results, score, verdict = graded
    return _row(
        test,
        response,
        output,
        results,
        _judged(results, score, verdict, graded=True),
        target=target,
        threshold=threshold,
        dry_run=dry_run,
        attempt=attempt,
        eval_path=eval_path,
        suite=suite,
        fingerprint=fingerprint,
        started_at=started_at,
    )


def graded_row(
    test: Test,
    response: TargetResponse,
    results: list[GraderResult],
    *,
    target: str,
    threshold: float,
    dry_run: bool,
    attempt: int,
    eval_path: str,
    suite: str,
    graded: bool,
    fingerprint: str | None = None,
    started_at: str | None = None,
) -> TestResult:
    """The row of an answer graded by `results` under the scoring contract. `graded`: the test has
    graders. `started_at`: when the runner started the attempt (the row's start when the answer
    gives none; it ends now)."""
    score, verdict = combine_grader_results(results, threshold)
    return _row(
        test,
        response,
        answer_text(response),
        results,
        _judged(results, score, verdict, graded=graded),
        target=target,
        threshold=threshold,
        dry_run=dry_run,
        attempt=attempt,
        eval_path=eval_path,
        suite=suite,
        fingerprint=fingerprint,
        started_at=started_at,
    )


# TestResult's fields in the order `_row` passes them. Checked as the module loads: a field added or
# moved fails every run and test at once, never shifting a row's values into other fields.
_ROW_FIELDS = (
    "test_id", "suite", "target", "score", "execution_status", "verdict", "threshold", "scores",
    "error", "failure_stage", "failure_reason_code", "missing_secret", "token_usage", "cost_usd",
    "duration_ms", "timestamp", "start_time", "end_time", "eval_path", "line", "attempt",
    "aggregation", "adaptive", "trials", "conversation_id", "input", "output", "metadata", "tags",
    "dry_run", "fingerprint", "provenance", "notes",
)  # fmt: skip
if TestResult.__struct_fields__ != _ROW_FIELDS:
    raise ImportError("agentv_ci.grading: TestResult's fields changed; update _ROW_FIELDS and _row")

# A test's score, verdict and status, with its error, failure stage and reason code (None when ok).
_Judgement = tuple[float, Verdict, ExecutionStatus, str | None, str | None, str | None]


def _judged(results: list[GraderResult], score: float, verdict: Verdict, *, graded: bool) -> _Judgement:
    """The row's outcome from its graders' `results` and their combined `score` and `verdict`."""
    skipped = False
    for r in results:  # one loop, not any(genexpr) twice: once per answer
        if r.error is not None:
            errors = [f"{r.name}: {r.error}" for r in results if r.error is not None]
            error = "grader error: " + "; ".join(errors)
            return 0.0, "fail", "execution_error", error, "grading", "grader_error"
        if r.verdict == "skip":
            skipped = True
    status: ExecutionStatus = "quality_failure" if verdict == "fail" else "ok"
    if not graded:
        return score, verdict, status, None, None, "no_graders"
    if skipped:
        # As AgentV: a grader that skipped leaves the answer unjudged, an execution error (stage
        # `evaluator`); never a "not run" row for a test whose target answered.
        error = _skipped_graders_error([r for r in results if r.verdict == "skip"])
        return 0.0, "fail", "execution_error", error, "evaluator", "evaluator_error"
    return score, verdict, status, None, None, None


def _row(
    test: Test,
    response: TargetResponse,
    output: str,
    results: list[GraderResult],
    judged: _Judgement,
    *,
    target: str,
    threshold: float,
    dry_run: bool,
    attempt: int,
    eval_path: str,
    suite: str,
    fingerprint: str | None,
    started_at: str | None,
) -> TestResult:
    """`graded_row` once its outcome is `judged`; `output`: the answer's text (`answer_text`)."""
    score, verdict, status, error, failure_stage, reason = judged
    usage = response.token_usage
    counted = usage_problem(usage)
    if counted is not None:  # a target's impossible count: no row that `report` would refuse
        error, usage = f"the target reported {counted}", None
        status, score, verdict, failure_stage, reason = (
            "execution_error",
            0.0,
            "fail",
            "agent",
            "provider_error",
        )
    timestamp = now_millis()
    start_time, end_time = response.start_time, response.end_time
    if started_at is not None and start_time is None:
        start_time, end_time = started_at, timestamp
    # By position, in _ROW_FIELDS' order: matching 28 keywords costs more than building the row.
    return TestResult(
        test.id,
        suite,
        target,
        score,
        status,  # execution_status
        verdict,
        threshold,
        results,  # scores
        error,
        failure_stage,
        reason,  # failure_reason_code
        None,  # missing_secret
        usage,  # token_usage
        response.cost_usd,
        response.duration_ms,
        timestamp,
        start_time,
        end_time,
        eval_path,
        test.location.line if test.location and test.location.line > 0 else None,  # line
        attempt,
        None,  # aggregation
        None,  # adaptive
        [],  # trials
        test.conversation_id,
        _cap(_input_text(test.input), INPUT_CAP),  # input
        _cap(output, OUTPUT_CAP),  # output
        dict(test.metadata),
        list(test.tags),
        dry_run or response.dry_run,
        fingerprint,
        None,  # provenance
        list(response.notes),
    )
