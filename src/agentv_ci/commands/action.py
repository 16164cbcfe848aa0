"""`agentv-ci action`: the GitHub Action's entry point, configured by `INPUT_*` only."""

from typing import Annotated

import typer


def action_command(
    extra: Annotated[list[str] | None, typer.Argument(hidden=True, show_default=False)] = None,
) -> None:
    """Run as the GitHub Action step: select, run, gate, report, comment, set outputs.

    Reads the inputs from INPUT_* and the run from GITHUB_* (see docs/github.md); it takes no flags.
    """
    from agentv_ci.errors import UsageError

    if extra:
        raise UsageError(
            f"`agentv-ci action` takes no arguments, got {' '.join(extra)!r}",
            hint="the Action is configured with named inputs, e.g. `with: {dry_run: true, threshold: 0.8}`;"
            " `with: args:` is not an input of this action",
        )
    from agentv_ci.action.pipeline import run_action

    raise SystemExit(run_action())
