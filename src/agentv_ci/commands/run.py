"""`agentv-ci run` (not implemented yet)."""

from __future__ import annotations

import typer


def run_command() -> None:
    """Not implemented yet."""
    typer.echo("agentv-ci run: not implemented yet", err=True)
    raise typer.Exit(4)
