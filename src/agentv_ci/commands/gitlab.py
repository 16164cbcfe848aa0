"""`agentv-ci gitlab`: the Action's step in a GitLab CI job (platforms/gitlab/)."""

from typing import Annotated

import typer


def gitlab_command(
    ctx: typer.Context,
    settings: Annotated[list[str] | None, typer.Argument(hidden=True, show_default=False)] = None,
) -> None:
    """Run as a GitLab CI job: select from the MR's diff base, run, gate, report, edit the MR note.

    Takes the GitHub Action's inputs as flags of the same names (--paths, --changed-only, --target,
    --threshold, --max-regression, --baseline, --comment, --output-dir, ...), each also settable as
    AGENTV_CI_<NAME>; reads GitLab's CI_* variables; the API token is AGENTV_CI_GITLAB_TOKEN. Writes
    junit.xml, gl-code-quality-report.json, metrics.txt and agentv-ci.env into the output directory
    (see docs/gitlab.md).
    """
    from agentv_ci.platforms.gitlab.step import run_gitlab

    raise SystemExit(run_gitlab([*(settings or []), *ctx.args]))
