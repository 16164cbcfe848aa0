"""`agentv-ci discover [PATHS] --base REF`: which evals a branch affects, and why (docs/selection.md)."""

import os
from pathlib import Path
from typing import Annotated

import typer


def discover_command(
    paths: Annotated[
        list[Path] | None, typer.Argument(help="Eval files or directories (default: the current directory).")
    ] = None,
    base: Annotated[
        str | None,
        typer.Option("--base", help="Compare with this ref (default: $GITHUB_BASE_REF).", show_default=False),
    ] = None,
    head: Annotated[str, typer.Option("--head", help="The changed side.")] = "HEAD",
    include_uncommitted: Annotated[
        bool,
        typer.Option("--include-uncommitted", help="Count modified, staged and untracked work-tree files."),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
) -> None:
    """List the evals affected by the changes between the merge-base of BASE and HEAD, with reasons."""
    import json

    from agentv_ci.selection.discover import base_ref, discover_changed_evals
    from agentv_ci.selection.render import render_selection

    selection = discover_changed_evals(
        list(paths or [Path(".")]),
        base=base_ref(base, os.environ),
        head=head,
        include_uncommitted=include_uncommitted,
    )
    if as_json:
        typer.echo(json.dumps(selection.to_json(), indent=2, ensure_ascii=False))
    else:
        typer.echo(render_selection(selection))
