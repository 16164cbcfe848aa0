"""`agentv-ci merge`: join shard result dirs into one run dir."""

from pathlib import Path
from typing import Annotated

import typer


def merge_command(
    inputs: Annotated[
        list[Path], typer.Argument(help="Shard run dirs or index.jsonl files.", show_default=False)
    ],
    output: Annotated[Path, typer.Option("-o", "--output", help="Merged run dir.")],
) -> None:
    """Merge shard results: one row per suite + test + target (a later shard's row wins).

    Exits 3 when the inputs' plans list tests that have no result (an interrupted or killed shard,
    a shard missing altogether): the merged run is incomplete. Inputs that all selected nothing
    (change-based selection) merge into a skipped run, exit 0, unless a shard has no record."""
    from agentv_ci.errors import ExitCode
    from agentv_ci.results.plan_check import PLAN_UNKNOWN, incomplete_reason
    from agentv_ci.running.merging import merge_runs

    merged = merge_runs(inputs, output)
    typer.echo(f"merged {merged.rows} result(s) from {len(inputs)} input(s) into {output / 'index.jsonl'}")
    if merged.duplicates:
        typer.echo(f"note: {merged.duplicates} duplicate row(s) replaced by a later input", err=True)
    summary = merged.summary
    if summary.plan_unknown:
        typer.echo(f"note: {PLAN_UNKNOWN}", err=True)
    if summary.planned is not None and (summary.not_run or summary.missing_shards):
        typer.echo(f"INCONCLUSIVE: {incomplete_reason(summary, summary.not_run)}")
        raise SystemExit(int(ExitCode.INCONCLUSIVE))  # see report.py: typer.Exit is lost in cli.run_app
    if summary.skipped:
        typer.echo(f"SKIPPED: every input selected no eval: {summary.skipped}")
