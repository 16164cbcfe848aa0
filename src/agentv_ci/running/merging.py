"""Join shard result dirs (`agentv-ci merge`) into one `index.jsonl` + `summary.json`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agentv_ci.errors import UsageError
from agentv_ci.model.result import RunSummary, TestResult


@dataclass
class MergeOutcome:
    rows: int
    duplicates: int
    summary: RunSummary


def merge_runs(inputs: list[Path], output_dir: Path) -> MergeOutcome:
    """Read every input (run dir or results file), keep one row per suite + test id + target (a later
    input's row wins, except that a `not_run` row never replaces a finished one), and write
    `output_dir/index.jsonl` and `summary.json`. Run facts: earliest start, latest end, any dry-run
    or budget stop carried over."""
    from agentv_ci.reporting.results_file import (
        ResultsWriter,
        load_run,
        summary_from_results,
        write_summary_json,
    )

    if not inputs:
        raise UsageError("merge needs at least one input")
    rows: dict[tuple[str, str, str], TestResult] = {}
    duplicates = 0
    runs: list[RunSummary] = []
    for path in inputs:
        run = load_run(path)
        runs.append(run)
        for result in run.results:
            key = (result.suite, result.test_id, result.target)
            earlier = rows.get(key)
            if earlier is not None:
                duplicates += 1
                if result.execution_status == "not_run" and earlier.execution_status != "not_run":
                    continue  # a finished row is never replaced by a "not run" one
            rows[key] = result
    index = output_dir / "index.jsonl"
    if index.exists():
        index.unlink()
    with ResultsWriter(index) as writer:
        for result in rows.values():
            writer.append(result)
    starts = [r.started_at for r in runs if r.started_at]
    ends = [r.ended_at for r in runs if r.ended_at]
    summary = summary_from_results(
        rows.values(),
        started_at=min(starts) if starts else None,
        ended_at=max(ends) if ends else None,
        duration_ms=sum(r.duration_ms or 0.0 for r in runs),
        dry_run=any(r.dry_run for r in runs),
        # Only while some row is still "not run": a rerun shard that finished them clears it.
        budget_exhausted=any(r.budget_exhausted for r in runs)
        and any(row.execution_status == "not_run" for row in rows.values()),
        selection={k: v for r in runs for k, v in r.selection.items()},
        interrupted=any(r.interrupted for r in runs),  # a partial shard makes a partial whole
    )
    write_summary_json(output_dir / "summary.json", summary)
    return MergeOutcome(rows=len(rows), duplicates=duplicates, summary=summary)
