"""`agentv-ci schema` (not implemented yet)."""

from __future__ import annotations

import typer


def schema_command() -> None:
    """Not implemented yet."""
    typer.echo("agentv-ci schema: not implemented yet", err=True)
    raise typer.Exit(4)
