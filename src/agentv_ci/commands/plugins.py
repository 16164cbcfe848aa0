"""`agentv-ci plugins [--json] [--check]` and `agentv-ci plugins new KIND NAME [DIR]`."""

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    help="Installed graders, targets and reporters; `plugins new` scaffolds a plugin package.",
    invoke_without_command=True,
    no_args_is_help=False,
    add_completion=False,
    rich_markup_mode=None,
)


@app.callback()
def plugins_command(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON document (see docs/plugins.md).")] = False,
    check: Annotated[
        bool, typer.Option("--check", help="Exit 2 when a plugin is broken (for CI and images).")
    ] = False,
) -> None:
    """List every installed plugin: distribution, version, plugin API version and load error.

    Every plugin is imported and checked against its contract; a broken one is listed with what is
    wrong. Exit 0, or 2 with --check when any plugin is broken.
    """
    if ctx.invoked_subcommand is not None:
        return
    from agentv_ci.plugins.status import plugins_report, render_plugins_text

    report = plugins_report()
    if as_json:
        import msgspec

        typer.echo(msgspec.json.format(msgspec.json.encode(report).decode(), indent=2))
    else:
        typer.echo(render_plugins_text(report))
    if check and report.broken:
        typer.echo(f"error: {len(report.broken)} broken plugin(s)", err=True)
        raise SystemExit(2)


@app.command("new")
def new_command(
    kind: Annotated[str, typer.Argument(help="grader, target or reporter.", show_default=False)],
    name: Annotated[str, typer.Argument(help="The entry-point name (kebab-case).", show_default=False)],
    directory: Annotated[
        Path | None,
        typer.Argument(help="Where to create it (default: ./agentv-ci-NAME).", show_default=False),
    ] = None,
) -> None:
    """Create a working plugin package: pyproject with the entry point, the class, a README, a test."""
    from agentv_ci.plugins.scaffold import scaffold_plugin

    written = scaffold_plugin(kind, name, directory)  # type: ignore[arg-type]  # checked inside
    root = written[0].parent
    typer.echo(f"created {root}/ ({len(written)} files)")
    typer.echo(f"  cd {root} && pip install -e '.[test]' && pytest")
