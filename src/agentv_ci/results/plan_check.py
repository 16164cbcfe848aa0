"""Results read back (`report`, `merge`, `compare`, the Action's `results:`) counted against their
run's plan: a planned job with no row gets a `not_run` row, and the summary says how many were
planned. Results without a plan record are read as they are, marked `plan_unknown`."""

from __future__ import annotations

from pathlib import Path

import msgspec

from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.results.plan_file import (
    INTERRUPTED,
    STOPPED,
    Plan,
    PlannedJob,
    count_against_plan,
    not_run_row,
    read_plan,
)

__all__ = [
    "NOTHING_SELECTED",
    "NO_RESULT",
    "PLAN_UNKNOWN",
    "apply_plan",
    "incomplete_reason",
    "missing_reason",
]

NO_RESULT = "not run: the run recorded no result for this planned test"
NOTHING_SELECTED = "No eval is affected by the changes: nothing was selected to run."
PLAN_UNKNOWN = (
    "plan unknown: these results carry no plan record (plan.jsonl), so tests that never ran cannot be counted"
)


def apply_plan(summary: RunSummary, directory: Path, *, has_summary: bool) -> RunSummary:
    """`summary` (rows read from `directory`'s index.jsonl; `has_summary`: a summary.json was there)
    with a `not_run` row for each planned job that has none, and `planned`/`not_run` counted."""
    plan = read_plan(directory)
    if plan is None:
        return msgspec.structs.replace(
            summary, planned=None, plan_unknown=True, missing_shards=[], skipped=None
        )
    reason, code = missing_reason(has_summary=has_summary, interrupted=summary.interrupted)
    dry_run = summary.dry_run or plan.dry_run
    added: list[TestResult] = []

    def missing(job: PlannedJob) -> None:
        added.append(not_run_row(job, reason, code=code, dry_run=dry_run))

    results = list(summary.results)
    count = count_against_plan(plan, ((r.suite, r.test_id, r.target) for r in results), missing)
    results.extend(added)
    not_run = sum(1 for r in results if r.execution_status == "not_run") + count.unlisted
    skipped = skipped_run(plan, count.missing_shards, len(results))
    return msgspec.structs.replace(
        summary,
        results=results,
        planned=count.planned,
        not_run=not_run,
        plan_unknown=False,
        missing_shards=count.missing_shards,
        dry_run=dry_run,
        skipped=(summary.skipped or NOTHING_SELECTED) if skipped else None,
    )


def skipped_run(plan: Plan, missing_shards: list[str], rows: int) -> bool:
    """Whether results read back are a run that selected nothing: only as its plan says (no job,
    `nothing_selected`), with no shard missing and no row."""
    return plan.end.nothing_selected and plan.listed == 0 and not missing_shards and rows == 0


def missing_reason(*, has_summary: bool, interrupted: bool) -> tuple[str, str]:
    """(error, failure_reason_code) of the `not_run` row of a planned job without a row."""
    if not has_summary:
        return STOPPED, "run_stopped"
    if interrupted:
        return INTERRUPTED, "interrupted"
    return NO_RESULT, "no_result"


def incomplete_reason(summary: RunSummary, not_run: int) -> str:
    """`incomplete: N of M tests did not run` (naming missing shards)."""
    if not not_run and summary.missing_shards:  # shards that selected nothing cannot say what it planned
        shards = ", ".join(summary.missing_shards)
        return f"incomplete: no results from shard {shards}: what it would have run is unknown"
    line = f"incomplete: {not_run} of {summary.planned} tests did not run"
    if summary.missing_shards:
        line += f" (no results from shard {', '.join(summary.missing_shards)})"
    return line
