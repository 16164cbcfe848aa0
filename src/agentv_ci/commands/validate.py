"""`agentv-ci validate`: check eval files and everything they pull in; report every problem at once."""

from pathlib import Path
from typing import Annotated

import typer

from agentv_ci.commands.common_options import AllowOutsideRepo

FORMATS = ("text", "json", "github", "sarif")

# SystemExit, not typer.Exit: `cli.run_app` runs typer with standalone_mode=False, where typer.Exit
# becomes a return value and the process would exit 0.


def validate_command(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="PATH",
            help="Eval files, directories or targets files (default: the current directory).",
        ),
    ] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Treat unknown keys as errors.")] = False,
    max_warnings: Annotated[
        int | None, typer.Option("--max-warnings", help="Fail when there are more than N warnings.", min=0)
    ] = None,
    output_format: Annotated[
        str, typer.Option("--format", help="Output format: text, json, github or sarif.")
    ] = "text",
    allow_outside_repo: AllowOutsideRepo = None,
    targets_file: Annotated[
        Path | None,
        typer.Option("--targets", metavar="FILE", help="targets.yaml (file or dir), as `run --targets`."),
    ] = None,
    target: Annotated[
        list[str] | None,
        typer.Option(
            "--target", metavar="NAME", help="Check this target instead of the files' own, as `run --target`."
        ),
    ] = None,
    skip_non_eval_files: Annotated[
        bool,
        typer.Option(
            "--skip-non-eval-files",
            help="Skip named files a directory scan would not pick up (a .jsonl recording, results or "
            "baseline); nothing left to check exits 0. For the pre-commit hook.",
        ),
    ] = False,
) -> None:
    """Validate eval files: syntax, types, unknown keys, graders, referenced files and the targets
    they use. A targets file named here is checked with the eval files that read it. Exit 2 on errors."""
    if output_format not in FORMATS:
        typer.echo(f"error: --format must be one of {', '.join(FORMATS)}, got {output_format!r}", err=True)
        raise SystemExit(2)
    from agentv_ci.loading.discovery import check_paths_exist
    from agentv_ci.model.bounds import check_run_flags
    from agentv_ci.validation.output_formats import (
        github_commands,
        github_conclusion,
        render_json,
        render_text,
    )
    from agentv_ci.validation.sarif_output import render_sarif
    from agentv_ci.validation.validator import validate_paths

    check_run_flags(targets=target or ())
    targets = list(paths) if paths else [Path(".")]
    check_paths_exist(targets)
    report = validate_paths(
        targets,
        strict=strict,
        allow_outside=allow_outside_repo or (),
        targets_file=targets_file,
        cli_targets=tuple(target or ()),
        skip_non_eval=skip_non_eval_files,
    )
    if output_format == "github":
        from agentv_ci.security.streams import print_workflow_command

        for line in github_commands(report):
            print_workflow_command(line)
        typer.echo(github_conclusion(report))
    else:
        renderers = {"text": render_text, "json": render_json, "sarif": render_sarif}
        typer.echo(renderers[output_format](report))
    if not report.files and skip_non_eval_files:
        return  # only recordings, results or baselines were named: nothing to check
    if not report.files:
        typer.echo(f"error: no eval files found in {', '.join(str(p) for p in targets)}", err=True)
        raise SystemExit(2)
    if report.errors:
        raise SystemExit(2)
    if max_warnings is not None and report.warnings > max_warnings:
        typer.echo(f"error: {report.warnings} warning(s) exceed --max-warnings {max_warnings}", err=True)
        raise SystemExit(2)
