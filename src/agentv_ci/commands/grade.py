"""`agentv-ci grade EVAL --responses FILE.jsonl`: grade recorded answers offline (no target is called).

One JSON object per line: `{test_id, output|text, messages?, tool_calls?, token_usage?, cost_usd?,
duration_ms?, target?}`. Results go to `DIR/index.jsonl`. Exit 0 all passed, 1 a test is below its
threshold, 2 bad input, 3 inconclusive: a grader errored or a test of the eval has no recorded answer
(and nothing failed). A test without an answer gets a `not_run` row.
"""

from pathlib import Path
from typing import Annotated

import typer

from agentv_ci.commands.common_options import AllowOutsideRepo

ECHO_BATCH = 1024

# SystemExit, not typer.Exit: `cli.run_app` runs typer with standalone_mode=False, where typer.Exit
# becomes a return value and the process would exit 0.


def grade_command(
    eval_path: Annotated[Path, typer.Argument(help="The eval file.", show_default=False)],
    responses: Annotated[
        Path,
        typer.Option("--responses", help="Recorded answers (JSONL).", show_default=False),
    ],
    output: Annotated[Path | None, typer.Option("-o", "--output", help="Results dir (index.jsonl).")] = None,
    threshold: Annotated[float | None, typer.Option("--threshold", help="Per-test pass bar 0..1.")] = None,
    grader_target: Annotated[
        str | None, typer.Option("--grader-target", help="Target answering every llm-grader.")
    ] = None,
    targets_file: Annotated[Path | None, typer.Option("--targets", help="targets.yaml path.")] = None,
    three_way: Annotated[
        bool, typer.Option("--three-way", help="Also show pass/borderline/fail (0.8 / 0.6).")
    ] = False,
    allow_outside_repo: AllowOutsideRepo = None,
    pass_env: Annotated[
        list[str] | None,
        typer.Option("--pass-env", help="Hand this environment variable to code graders (repeatable)."),
    ] = None,
) -> None:
    """Grade recorded answers against an eval file's graders, offline."""
    import asyncio

    from agentv_ci.errors import ExitCode, UsageError
    from agentv_ci.running.offline_grading import run_offline_grading

    if threshold is not None and not 0 <= threshold <= 1:
        raise UsageError(f"--threshold must be between 0 and 1, got {threshold}")
    if pass_env:
        from agentv_ci.security.child_env import pass_through

        pass_through(pass_env)
    outcome = asyncio.run(
        run_offline_grading(
            eval_path,
            responses,
            output=output,
            threshold=threshold,
            grader_target=grader_target,
            targets_file=targets_file,
            allow_outside=tuple(allow_outside_repo or ()),
        )
    )
    for warning in outcome.warnings:  # e.g. a legacy grader name: graded as its modern type, said so
        typer.echo(warning, err=True)
    lines = outcome.lines(three_way=three_way)
    for start in range(0, len(lines), ECHO_BATCH):  # one write per batch: a write per line cost ~40 µs
        typer.echo("\n".join(lines[start : start + ECHO_BATCH]))
    if outcome.any_failed:
        raise SystemExit(int(ExitCode.GATE_FAILED))
    if outcome.inconclusive:  # a grader errored, or a test has no recorded answer
        raise SystemExit(int(ExitCode.INCONCLUSIVE))
    raise SystemExit(int(ExitCode.OK))
