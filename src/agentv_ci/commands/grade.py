"""`agentv-ci grade` (not implemented yet)."""

from __future__ import annotations

import typer


def grade_command() -> None:
    """Not implemented yet."""
    typer.echo("agentv-ci grade: not implemented yet", err=True)
    raise typer.Exit(4)
