"""`agentv-ci compare` (not implemented yet)."""

from __future__ import annotations

import typer


def compare_command() -> None:
    """Not implemented yet."""
    typer.echo("agentv-ci compare: not implemented yet", err=True)
    raise typer.Exit(4)
