"""`agentv-ci plugins`: list installed graders, targets and reporters and where they come from."""

from __future__ import annotations

from typing import Annotated

import typer


def plugins_command(
    check: Annotated[
        bool, typer.Option("--check", help="Import every plugin and report broken ones.")
    ] = False,
) -> None:
    """List installed plugins (graders, targets, reporters) with their entry point and distribution."""
    from agentv_ci.errors import ConfigError
    from agentv_ci.plugins import (
        GRADERS_NAMESPACE,
        REPORTERS_NAMESPACE,
        TARGETS_NAMESPACE,
        list_plugins,
        load_plugin_class,
    )

    broken = 0
    for namespace in (GRADERS_NAMESPACE, TARGETS_NAMESPACE, REPORTERS_NAMESPACE):
        typer.echo(f"{namespace}:")
        for info in list_plugins(namespace):
            status = ""
            if check:
                try:
                    load_plugin_class(namespace, info.name)
                    status = "  ok"
                except ConfigError as exc:
                    broken += 1
                    status = f"  BROKEN: {exc.message}"
            typer.echo(f"  {info.name:<20} {info.entry_point}  ({info.distribution}){status}")
    if broken:
        raise typer.Exit(2)
