"""`agentv-ci init [PATH]`: a repository's first eval, its targets, a stand-in agent and a workflow."""

from pathlib import Path
from typing import Annotated

import typer

_NEXT_STEPS = """\
next:
  agentv-ci validate evals/
  agentv-ci run evals/ --dry-run
  agentv-ci run evals/
  git add .agentv agent evals .github && git commit -m "Add agentv-ci evals"
  (docs/getting-started.md: from here to a red and a green pull request)"""


def init_command(
    path: Annotated[
        Path,
        typer.Argument(
            help="The repository to write into (default: the current directory).", show_default=False
        ),
    ] = Path("."),
    force: Annotated[bool, typer.Option("--force", help="Overwrite files that exist.")] = False,
    action_sha: Annotated[
        str | None,
        typer.Option(
            "--action-sha",
            metavar="SHA",
            help="The commit of the agentevals/action release the workflow pins (default: a placeholder "
            "of 40 zeros, to replace).",
        ),
    ] = None,
    action_version: Annotated[
        str | None,
        typer.Option(
            "--action-version", metavar="vX.Y.Z", help="The release that commit is, for the comment."
        ),
    ] = None,
) -> None:
    """Write .agentv/targets.yaml (a cli target and a model target), agent/hello_agent.py,
    evals/hello.eval.yaml and .github/workflows/agentv-ci.yml. Refuses to overwrite (exit 2) without
    --force."""
    from agentv_ci.starter import templates
    from agentv_ci.starter.writing import starter_files, write_starter_files
    from agentv_ci.text_safety import printable

    files = starter_files(action_sha=action_sha, action_version=action_version)
    written = write_starter_files(path, files, force=force)
    for file in written:
        typer.echo(f"wrote {printable(file)}")
    if action_sha is None:
        version = action_version or templates.ACTION_VERSION
        pin = f"{templates.ACTION_REPOSITORY}@{templates.PLACEHOLDER_SHA}"
        typer.echo(
            f"note: the workflow pins {pin} (a placeholder): replace it with the commit of release "
            f"{version}, which\n  {templates.release_commit_command(version)}\nprints (or run init again "
            "with --force --action-sha SHA); until then the workflow fails to start."
        )
    typer.echo(_NEXT_STEPS)
