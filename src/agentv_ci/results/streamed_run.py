"""A finished run read for `report` in flat memory, as `run` holds its own results.

The rows of the run's `index.jsonl` are decoded one at a time, re-judged (`--threshold`), redacted and
copied to a spool file in a temporary directory, while their figures go into a `ResultsTally`; the
planned jobs without a row get their `not_run` rows there too (reporting.plan_check). The summary's
`results` are then a `StoredResults` over that spool: JUnit, SARIF and reporter plugins read the rows
back from it, the gates, the console and the Markdown summary read the tally. Memory is one row plus
8 bytes a test (a hash of each key, to see that no two rows are attempts of one test).

A results file whose rows repeat a test (attempt rows to merge, or shards concatenated by hand) is
read the usual way (`load_run`): merging attempts needs them side by side.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import msgspec

from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.results.plan_check import missing_reason, skipped_run
from agentv_ci.results.plan_file import PLAN_NAME, PlannedJob, count_against_plan, not_run_row, read_plan
from agentv_ci.results.results_file import (
    SUMMARY_NAME,
    index_path,
    iter_results,
    load_run,
    summary_facts,
)
from agentv_ci.results.results_writer import ResultsWriter
from agentv_ci.results.stored_results import StoredResults
from agentv_ci.results.tally import ResultsTally
from agentv_ci.results.written_rows import WrittenRows

__all__ = ["load_run_streamed"]


def load_run_streamed(
    path: Path, spool_dir: Path, transform: Callable[[TestResult], TestResult] | None = None
) -> RunSummary:
    """The run at `path` (a run directory or results file) as `load_run` reads it, each row passed
    through `transform` (e.g. re-judged), with its rows spooled under `spool_dir` (which must outlive
    the summary) instead of held in memory."""
    index = index_path(path)
    directory = index.parent
    has_summary = (directory / SUMMARY_NAME).is_file()
    killed = (directory / PLAN_NAME).is_file() and not has_summary  # a last row may be cut mid-write
    facts = summary_facts(directory)
    spool = spool_dir / "index.jsonl"
    tally = ResultsTally()
    seen: set[int] = set()
    written_rows = WrittenRows()  # what the reports would otherwise read every row again for
    with ResultsWriter(spool, written_rows) as writer:
        for row in iter_results(index, torn_tail=killed):
            key = hash((row.suite, row.test_id, row.target))
            if key in seen:  # attempts of one test in separate rows: merged the usual way
                return _held(path, transform)
            seen.add(key)
            tally.add(writer.append(transform(row) if transform is not None else row))
    seen.clear()
    base = msgspec.convert({"results": [], **facts}, RunSummary, strict=False)
    dry_run = base.dry_run or tally.dry_run
    plan = read_plan(directory)
    if plan is None:
        results = StoredResults(spool, tally, count=tally.results, unique_keys=True, written=written_rows)
        return msgspec.structs.replace(
            base,
            results=results,
            dry_run=dry_run,
            planned=None,
            plan_unknown=True,
            missing_shards=[],
            skipped=None,  # only a plan says a run selected nothing
        )
    reason, code = missing_reason(has_summary=has_summary, interrupted=base.interrupted)
    dry_run = dry_run or plan.dry_run
    written = StoredResults(spool, tally, count=tally.results, unique_keys=True)
    with ResultsWriter(spool, written_rows) as writer:

        def missing(job: PlannedJob) -> None:  # called once every row's key has been read
            tally.add(writer.append(not_run_row(job, reason, code=code, dry_run=dry_run)))

        count = count_against_plan(plan, written.keys(), missing)
    return msgspec.structs.replace(
        base,
        results=StoredResults(spool, tally, count=tally.results, unique_keys=True, written=written_rows),
        planned=count.planned,
        not_run=tally.not_run_status + count.unlisted,
        plan_unknown=False,
        missing_shards=count.missing_shards,
        dry_run=dry_run,
        skipped=base.skipped if skipped_run(plan, count.missing_shards, tally.results) else None,
    )


def _held(path: Path, transform: Callable[[TestResult], TestResult] | None) -> RunSummary:
    summary = load_run(path)
    if transform is None:
        return summary
    return msgspec.structs.replace(summary, results=[transform(r) for r in summary.results])
