"""The record of a run that selected nothing (change-based selection found no affected eval): an
empty `index.jsonl`, a `plan.jsonl` of no job that says `nothing_selected` (with the shard, when
the run is one), and a `summary.json` that says why (`skipped`). Later steps find a run: the
artifact upload, and `merge` / the Action's `results:`, which read a set of such shards as skipped
and a shard with no record at all as missing (docs/github.md, sharding)."""

from __future__ import annotations

from pathlib import Path

from agentv_ci.model.result import RunSummary
from agentv_ci.results.plan_file import PlanWriter
from agentv_ci.results.results_file import summary_from_results, write_summary_json

__all__ = ["write_skipped_run"]


def write_skipped_run(
    output_dir: Path,
    note: str,
    *,
    shard: tuple[int, int] | None,
    dry_run: bool = False,
    started_at: str | None = None,
    ended_at: str | None = None,
) -> RunSummary:
    """Write the record of a run that selected nothing into `output_dir`; returns its summary."""
    output_dir.mkdir(parents=True, exist_ok=True)
    (output_dir / "index.jsonl").write_bytes(b"")
    PlanWriter(output_dir, shard=shard, dry_run=dry_run).commit(nothing_selected=True)
    summary = summary_from_results(
        [],
        started_at=started_at,
        ended_at=ended_at,
        duration_ms=0.0,
        selection={},
        planned=0,
        dry_run=dry_run,
        skipped=note,
    )
    write_summary_json(output_dir / "summary.json", summary)
    return summary
