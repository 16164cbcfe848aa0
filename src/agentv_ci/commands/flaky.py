"""`agentv-ci flaky RUN...`: how often each test passed over earlier runs, and whether it is flaky."""

from pathlib import Path
from typing import Annotated

import typer


def flaky_command(
    runs: Annotated[
        list[Path],
        typer.Argument(
            metavar="RUN",
            help="Run directories or index.jsonl files, oldest first.",
            show_default=False,
        ),
    ],
    json_output: Annotated[
        bool, typer.Option("--json", help="Print a JSON list of objects instead of the table.")
    ] = False,
) -> None:
    """Per test x target over RUN...: runs, attempts, passes, pass rate (Wilson 95%), verdict flips and
    a label: stable-pass, stable-fail or flaky. Errors and tests not run are not attempts."""
    from agentv_ci.history.flakiness import measure_flakiness
    from agentv_ci.history.runs import read_history
    from agentv_ci.history.table import flakiness_json, flakiness_table
    from agentv_ci.text_safety import printable

    report = measure_flakiness(read_history(runs))
    typer.echo(flakiness_json(report) if json_output else flakiness_table(report))
    if report.unmeasured:
        names = ", ".join(printable(name) for name in report.unmeasured[:5])
        more = " ..." if len(report.unmeasured) > 5 else ""
        typer.echo(
            f"note: {len(report.unmeasured)} test(s) had no conclusive attempt (errors or not run), "
            f"not labelled: {names}{more}",
            err=True,
        )
