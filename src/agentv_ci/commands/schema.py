"""`agentv-ci schema`: print the JSON Schema (draft-07) for eval files, with installed plugins' config."""

from typing import Annotated

import typer


def schema_command(
    no_plugins: Annotated[
        bool,
        typer.Option("--no-plugins", help="Only the published schema, without installed plugins' config."),
    ] = False,
) -> None:
    """Print the JSON Schema for eval files (use it from VS Code's `yaml.schemas`).

    Installed third-party graders' config schemas are included, so editors complete and check their
    keys; a plugin that cannot be loaded is left out with a warning on stderr.
    """
    from agentv_ci.validation.schema_file import schema_text

    if no_plugins:
        typer.echo(schema_text(), nl=False)
        return
    import json

    from agentv_ci.validation.plugin_schemas import eval_schema_with_plugins
    from agentv_ci.validation.schema_file import load_schema

    schema, problems = eval_schema_with_plugins(load_schema())
    for problem in problems:
        typer.echo(f"warning: left out of the schema: {problem}", err=True)
    typer.echo(json.dumps(schema, indent=2, ensure_ascii=False))
