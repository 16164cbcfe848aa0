"""Grading recorded answers offline (`agentv-ci grade`): read a responses JSONL file, grade each line
against its test, write `index.jsonl`. No target is called; llm-graders use a grader target when one is
configured (`--grader-target`, or the eval target's `grader_target` in targets.yaml). Reading the
responses file is `graders.responses_file`. It sits in running/, above grading, beside the run it
replays (docs/architecture.md)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentv_ci.clock import now_millis
from agentv_ci.errors import LoadError
from agentv_ci.graders.answer_graders import AnswerGraders
from agentv_ci.graders.outcome import answer_text
from agentv_ci.graders.responses_file import RecordedResponse, read_responses
from agentv_ci.grading import answer_graders, grade_now, grade_test, relative_eval_path
from agentv_ci.loading.suite_loader import load_suite
from agentv_ci.model.result import TargetResponse, TestResult
from agentv_ci.model.source import SourceLocation
from agentv_ci.model.suite import Suite, Test
from agentv_ci.plugins import GraderTargetCaller
from agentv_ci.results.batched_rows import write_rows
from agentv_ci.results.gc_pause import paused_gc
from agentv_ci.results.plan_file import PlannedJob, PlanWriter
from agentv_ci.results.results_file import SUMMARY_NAME
from agentv_ci.running.session import timestamp_dir
from agentv_ci.running.spec_memo import BySpecs
from agentv_ci.scoring import effective_threshold, three_way_verdict
from agentv_ci.targets.config import load_targets
from agentv_ci.targets.grader_caller import make_grader_caller

__all__ = ["OfflineOutcome", "read_responses", "run_offline_grading", "uses_grader_model"]


# --------------------------------------------------------------------------- the offline session

JUDGE_TYPES = frozenset({"llm-grader", "rubrics", "composite"})
CONCURRENCY = 8


def uses_grader_model(test: Test) -> bool:
    """Whether grading `test` may call a grader model (llm-graders, rubrics, composites, or the
    implicit llm-grader from `criteria`)."""
    if not test.graders:
        return bool(test.criteria)
    return any(g.type in JUDGE_TYPES for g in test.graders)


# repr=False: on Python 3.11 `asyncio.run` formats its task, result included, twice when it restores
# the SIGINT handler; the default repr of 100k results cost seconds.
@dataclass(repr=False)
class OfflineOutcome:
    """What `agentv-ci grade` reports."""

    results: list[TestResult]
    output_dir: Path
    unanswered: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # the eval file's rendered load warnings

    @property
    def all_errored(self) -> bool:
        return bool(self.results) and all(r.execution_status == "execution_error" for r in self.results)

    @property
    def any_failed(self) -> bool:
        return any(r.verdict == "fail" and r.execution_status != "execution_error" for r in self.results)

    @property
    def any_errored(self) -> bool:
        return any(r.execution_status == "execution_error" for r in self.results)

    @property
    def inconclusive(self) -> bool:
        """A grader errored, or a test has no recorded answer: the answers were not all judged."""
        return self.any_errored or bool(self.unanswered)

    def lines(self, *, three_way: bool = False) -> list[str]:
        out: list[str] = []
        for r in self.results:
            label = "ERROR" if r.execution_status == "execution_error" else r.verdict.upper()
            extra = f" [{three_way_verdict(r.score)}]" if three_way and label != "ERROR" else ""
            out.append(f"{label:<5} {r.test_id}  score={r.score:.2f} threshold={r.threshold:g}{extra}")
            if r.error:
                out.append(f"      {r.error}")
            else:
                out.extend(f"      - {a.text}" for g in r.scores for a in g.assertions if not a.passed)
        passed = sum(1 for r in self.results if r.verdict == "pass")
        errors = sum(1 for r in self.results if r.execution_status == "execution_error")
        failed = len(self.results) - passed - errors
        skipped = sum(1 for r in self.results if r.verdict == "skip")
        summary = f"{len(self.results)} graded: {passed} passed, {failed - skipped} failed, {errors} errors"
        if skipped:
            summary += f", {skipped} skipped"
        if self.unanswered:
            summary += f"; {len(self.unanswered)} test(s) without a recorded answer (not run)"
        out.extend(f"NOT RUN {test_id}  no recorded answer" for test_id in self.unanswered)
        out.append(summary)
        out.append(f"results: {self.output_dir / 'index.jsonl'}")
        return out


def _check_answers(recorded: list[RecordedResponse], suite: Suite, responses_path: Path) -> None:
    known = {t.id for t in suite.tests}
    for item in recorded:
        if item.test_id not in known:
            sample = ", ".join(sorted(known)[:5]) or "none"
            raise LoadError(
                f"unknown test id {item.test_id!r} (not in {suite.path})",
                location=SourceLocation(str(responses_path), item.line, 1),
                hint=f"known ids: {sample}",
            )


async def run_offline_grading(
    eval_path: Path,
    responses_path: Path,
    *,
    output: Path | None,
    threshold: float | None,
    grader_target: str | None,
    targets_file: Path | None,
    allow_outside: tuple[Path, ...] = (),
) -> OfflineOutcome:
    """Load the suite and the recorded answers, grade every answer, write `index.jsonl`.
    `allow_outside`: directories outside the repository the eval file may reference."""
    loaded = load_suite(eval_path, allow_outside=allow_outside)
    problems = [d for d in loaded.diagnostics if d.severity == "error"]
    if loaded.suite is None or problems:
        rendered = "\n".join(d.render() for d in problems or loaded.diagnostics)
        raise LoadError(f"{eval_path} has errors:\n{rendered}", hint=f"run `agentv-ci validate {eval_path}`")
    suite = loaded.suite
    # Every answer and row is held until the command ends: the cyclic GC would rescan them over and
    # again, and they form no cycles (reference counting frees them).
    with paused_gc(freeze=True):
        recorded = read_responses(responses_path)
        if not recorded:
            raise LoadError("no recorded answers", location=SourceLocation(str(responses_path)))
        _check_answers(recorded, suite, responses_path)
        tests = {t.id: t for t in suite.tests}
        callers = _GraderCallers(eval_path, grader_target=grader_target, targets_file=targets_file)
        if grader_target or targets_file or any(uses_grader_model(tests[r.test_id]) for r in recorded):
            callers.load()

        eval_path_of_suite = Path(suite.path)  # one Path for every answer: building one cost ~10 µs
        shown_path = relative_eval_path(eval_path_of_suite)  # the rows' text, once (a getcwd each else)

        # per set of grader specs, their built graders when every one reads the answer's text alone:
        # `grade_now` grades such an answer in one call, no coroutine or context per grader
        lanes: BySpecs[AnswerGraders | None] = BySpecs()

        async def grade_one(item: RecordedResponse, attempt: int) -> TestResult:
            test = tests[item.test_id]
            target = item.target or test.execution.target or suite.execution.target or "recorded"
            bar = effective_threshold(threshold, test, suite)
            if not has_content(item.response):  # `"output": null`, `""` or nothing: no answer to grade
                error = f"the recorded answer has no content ({responses_path}:{item.line})"
                return _row_without_answer(test, suite, bar, error=error, target=target, attempt=attempt)
            graders = lanes.of((), test.graders, lambda: answer_graders(test, eval_path_of_suite))
            if graders is not None:  # graders that read the answer's text alone: graded at once
                row = grade_now(
                    test,
                    item.response,
                    graders,
                    target=target,
                    threshold=bar,
                    dry_run=False,
                    eval_path=shown_path,
                    suite=test.suite,
                    attempt=attempt,
                )
                if row is not None:
                    return row
            return await grade_test(
                test,
                item.response,
                target=target,
                eval_path=eval_path_of_suite,
                threshold=bar,
                call_grader_target=callers.for_target(target),
                attempt=attempt,
                shown_eval_path=shown_path,
            )

        seen: dict[str, int] = {}
        attempts: list[int] = []
        for item in recorded:
            seen[item.test_id] = seen.get(item.test_id, -1) + 1
            attempts.append(seen[item.test_id])
        try:
            results = await _in_workers(len(recorded), lambda i: grade_one(recorded[i], attempts[i]))
        finally:
            await callers.aclose()
        if output is None:
            output = timestamp_dir()
        answered = {r.test_id for r in recorded}
        unanswered = [t for t in suite.tests if t.id not in answered]
        rows = results + [  # `report` on these results is inconclusive too, as `grade` is
            _row_without_answer(
                t, suite, effective_threshold(threshold, t, suite), error="no recorded answer"
            )
            for t in unanswered
        ]
        _start_results(output, rows)
        write_rows(output / "index.jsonl", rows)
    warnings = [d.render() for d in loaded.diagnostics if d.severity == "warning"]
    return OfflineOutcome(results, output, [t.id for t in unanswered], warnings)


async def _in_workers(count: int, job: Callable[[int], Awaitable[TestResult]]) -> list[TestResult]:
    """`job(0)` .. `job(count - 1)`, at most CONCURRENCY at a time, results in order. A few workers
    take the next index in turn: no task (nor pending coroutine) per answer, which cost more than
    grading an answer with the built-in graders."""
    results: list[TestResult | None] = [None] * count
    indexes = iter(range(count))

    async def worker() -> None:
        for index in indexes:  # shared: each index is taken by one worker
            results[index] = await job(index)

    await asyncio.gather(*(worker() for _ in range(min(CONCURRENCY, count))))
    return [r for r in results if r is not None]


def _start_results(output: Path, rows: list[TestResult]) -> None:
    """Make `output` this grade's results directory: another run's `index.jsonl` and `summary.json`
    there are removed and its `plan.jsonl` replaced by the grade's own (the rows about to be
    written), so `report` never judges these rows against another run's plan or facts."""
    attempts: dict[tuple[str, str, str], int] = {}
    first: dict[tuple[str, str, str], TestResult] = {}
    for row in rows:
        key = (row.suite, row.test_id, row.target)
        attempts[key] = attempts.get(key, 0) + 1
        first.setdefault(key, row)
    for stale in ("index.jsonl", SUMMARY_NAME):
        (output / stale).unlink(missing_ok=True)
    writer = PlanWriter(output, shard=None, dry_run=False)
    for key, row in first.items():
        writer.add(PlannedJob(*key, attempts=attempts[key], eval_path=row.eval_path, line=row.line))
    writer.commit()


def has_content(response: TargetResponse) -> bool:
    """Whether a recorded answer holds an answer: text, or tool calls to grade."""
    return bool(answer_text(response).strip()) or any(m.tool_calls for m in response.messages)


def _row_without_answer(
    test: Test, suite: Suite, threshold: float, *, error: str, target: str | None = None, attempt: int = 0
) -> TestResult:
    """A `not_run` row for a test the responses file holds no answer to; with `target`, an
    execution error for an answer that holds none."""
    return TestResult(
        test_id=test.id,
        suite=test.suite or suite.name,
        target=target or test.execution.target or suite.execution.target or "recorded",
        score=0.0,
        execution_status="not_run" if target is None else "execution_error",
        verdict="skip" if target is None else "fail",
        threshold=threshold,
        error=error,
        failure_stage=None if target is None else "agent",
        failure_reason_code="not_run" if target is None else "no_answer",
        attempt=attempt,
        timestamp=now_millis(),
        eval_path=relative_eval_path(Path(suite.path)),
        line=test.location.line if test.location and test.location.line > 0 else None,
        metadata=dict(test.metadata),
        tags=list(test.tags),
    )


class _GraderCallers:
    """One grader caller per eval target, created on first use (targets.yaml read once)."""

    def __init__(self, eval_path: Path, *, grader_target: str | None, targets_file: Path | None) -> None:
        self.eval_path = eval_path
        self.grader_target = grader_target
        self.targets_file = targets_file
        self.targets: Any = None
        self.callers: dict[str, Any] = {}

    def load(self) -> None:
        self.targets = load_targets(self.eval_path, explicit=self.targets_file)

    def for_target(self, target: str) -> GraderTargetCaller | None:
        if self.targets is None:
            return None
        if target not in self.callers:
            eval_target = target if target in self.targets.targets else None
            self.callers[target] = make_grader_caller(
                self.targets, eval_target=eval_target, override=self.grader_target, dry_run=False
            )
        caller: GraderTargetCaller | None = self.callers[target]
        return caller

    async def aclose(self) -> None:
        for caller in self.callers.values():
            if caller is not None:
                await caller.aclose()
