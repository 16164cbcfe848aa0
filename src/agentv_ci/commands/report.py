"""`agentv-ci report` (not implemented yet)."""

from __future__ import annotations

import typer


def report_command() -> None:
    """Not implemented yet."""
    typer.echo("agentv-ci report: not implemented yet", err=True)
    raise typer.Exit(4)
