"""`agentv-ci merge` (not implemented yet)."""

from __future__ import annotations

import typer


def merge_command() -> None:
    """Not implemented yet."""
    typer.echo("agentv-ci merge: not implemented yet", err=True)
    raise typer.Exit(4)
