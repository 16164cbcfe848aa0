"""Result rows the runner writes itself: tests that produced no graded answer."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from agentv_ci.clock import now_millis
from agentv_ci.model.result import TestResult
from agentv_ci.running.plan import Job


def unfinished_result(
    job: Job,
    *,
    status: Literal["not_run", "execution_error"],
    error: str,
    stage: str | None,
    reason: str,
    dry_run: bool,
    fingerprint: str | None = None,
    missing_secret: str | None = None,
    output: str | None = None,
    instant: bool = False,
) -> TestResult:
    """A row for a job that produced no graded answer (execution error or not run). `instant`: no
    attempt started, so the row starts and ends at its timestamp."""
    # lazy: the graders loaded only when `unfinished_result` runs
    from agentv_ci.grading import relative_eval_path

    test = job.test
    now = now_millis()
    return TestResult(
        test_id=test.id,
        suite=test.suite or job.suite.name,
        target=job.target,
        score=0.0,
        execution_status="not_run" if status == "not_run" else "execution_error",
        verdict="skip" if status == "not_run" else "fail",
        threshold=job.threshold,
        error=error,
        failure_stage=stage,
        failure_reason_code=reason,
        missing_secret=missing_secret,
        timestamp=now,
        start_time=now if instant else None,
        end_time=now if instant else None,
        eval_path=relative_eval_path(Path(job.suite.path)),
        line=test.location.line if test.location and test.location.line > 0 else None,
        conversation_id=test.conversation_id,
        output=output,
        metadata=dict(test.metadata),
        tags=list(test.tags),
        dry_run=dry_run,
        fingerprint=fingerprint,
    )
