"""`agentv-ci schema`: print the published JSON Schema (draft-07) for eval files."""

from __future__ import annotations

import typer


def schema_command() -> None:
    """Print the JSON Schema for eval files (use it from VS Code's `yaml.schemas`)."""
    from agentv_ci.validation.schema_file import schema_text

    typer.echo(schema_text(), nl=False)
