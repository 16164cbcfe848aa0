"""`agentv-ci compare`: noise-aware diff of two runs (ours or AgentV's index.jsonl)."""

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
    from agentv_ci.compare import compare_runs
    from agentv_ci.errors import ExitCode
    from agentv_ci.gating import regression_reasons
    from agentv_ci.reporting.comparison_text import render_comparison
    from agentv_ci.results.plan_check import PLAN_UNKNOWN, incomplete_reason
    from agentv_ci.results.results_file import load_run

    # each side counted against its plan: a planned test that did not run is "not comparable", not
    # "removed" (or "new")
    base_run, head_run = load_run(base), load_run(head)
    comparison = compare_runs(base_run.results, head_run.results)
    typer.echo(render_comparison(comparison, output_format.value))
    failed, _notes = regression_reasons(comparison, max_regression)
    incomplete = [
        f"{side}: {incomplete_reason(run, run.not_run)}"
        for side, run in (("base", base_run), ("head", head_run))
        if run.planned is not None and run.not_run
    ]
    for side, run in (("base", base_run), ("head", head_run)):
        if run.plan_unknown:
            typer.echo(f"note: {side}: {PLAN_UNKNOWN}", err=True)
    for line in incomplete:
        typer.echo(f"INCONCLUSIVE: {line}", err=True)
    if failed:
        for reason in failed[:20]:
            typer.echo(f"regression: {reason}", err=True)
        raise SystemExit(1)  # see report.py: typer.Exit would be lost in cli.run_app
    if incomplete:  # a regression among the tests that did not run cannot be ruled out
        raise SystemExit(int(ExitCode.INCONCLUSIVE))
