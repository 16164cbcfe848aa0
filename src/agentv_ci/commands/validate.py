"""`agentv-ci validate` (not implemented yet)."""

from __future__ import annotations

import typer


def validate_command() -> None:
    """Not implemented yet."""
    typer.echo("agentv-ci validate: not implemented yet", err=True)
    raise typer.Exit(4)
