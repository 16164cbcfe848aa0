"""`agentv-ci compare`: noise-aware diff of two runs (ours or AgentV's index.jsonl)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer


class CompareFormat(StrEnum):
    table = "table"
    json = "json"
    markdown = "markdown"


def compare_command(
    base: Annotated[Path, typer.Argument(help="Baseline results: index.jsonl or a run directory.")],
    head: Annotated[Path, typer.Argument(help="Head results: index.jsonl or a run directory.")],
    output_format: Annotated[
        CompareFormat, typer.Option("--format", help="Output format.")
    ] = CompareFormat.table,
    max_regression: Annotated[
        float | None,
        typer.Option(
            "--max-regression",
            min=0.0,
            max=1.0,
            help="Exit 1 when a test or suite regresses beyond noise by more than this score drop.",
        ),
    ] = None,
) -> None:
    """Match tests by suite + test id + target and label each change (regressions only beyond noise)."""
    from agentv_ci.compare import compare_runs, render_comparison
    from agentv_ci.gating import regression_reasons
    from agentv_ci.reporting.results_file import read_results

    comparison = compare_runs(read_results(base), read_results(head))
    typer.echo(render_comparison(comparison, output_format.value))
    failed, _notes = regression_reasons(comparison, max_regression)
    if failed:
        for reason in failed[:20]:
            typer.echo(f"regression: {reason}", err=True)
        raise SystemExit(1)  # see report.py: typer.Exit would be lost in cli.run_app
