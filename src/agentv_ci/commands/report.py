"""`agentv-ci report`: redo reports and gates from a results file (ours or AgentV's index.jsonl)."""

import functools
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agentv_ci.commands.common_options import History, MaxCostUsd, check_max_cost

if TYPE_CHECKING:
    from agentv_ci.finishing import GatePolicy
    from agentv_ci.gating import GateOptions
    from agentv_ci.model.result import RunSummary

_RATE = {"min": 0.0, "max": 1.0}


def report_command(
    results: Annotated[Path, typer.Argument(help="index.jsonl, or a run directory containing one.")],
    junit: Annotated[Path | None, typer.Option("--junit", help="Write JUnit XML here.")] = None,
    sarif: Annotated[Path | None, typer.Option("--sarif", help="Write SARIF 2.1.0 here.")] = None,
    markdown: Annotated[
        Path | None, typer.Option("--markdown", help="Write the Markdown summary here.")
    ] = None,
    report: Annotated[
        list[str] | None,
        typer.Option("--report", help="NAME=PATH: a report by an installed reporter plugin (repeatable)."),
    ] = None,
    baseline: Annotated[
        Path | None,
        typer.Option("--baseline", help="Baseline results (index.jsonl or run dir) to diff against."),
    ] = None,
    threshold: Annotated[
        float | None,
        typer.Option("--threshold", help="Per-test pass bar (overrides each test's own).", **_RATE),
    ] = None,
    min_pass_rate: Annotated[
        float | None,
        typer.Option("--min-pass-rate", help="Minimum pass rate, per suite and overall.", **_RATE),
    ] = None,
    min_mean_score: Annotated[
        float | None,
        typer.Option("--min-mean-score", help="Minimum mean score, per suite and overall.", **_RATE),
    ] = None,
    max_regression: Annotated[
        float | None,
        typer.Option(
            "--max-regression", help="Largest score drop tolerated vs --baseline (beyond noise).", **_RATE
        ),
    ] = None,
    fail_on_error: Annotated[
        bool,
        typer.Option(
            "--fail-on-error/--no-fail-on-error", help="Execution errors make the run inconclusive."
        ),
    ] = True,
    sarif_category: Annotated[
        str | None,
        typer.Option(
            "--sarif-category",
            help="SARIF automationDetails.id; leave unset to let upload-sarif's `category` decide.",
        ),
    ] = None,
    repo_root: Annotated[
        Path | None,
        typer.Option("--repo-root", help="Root for repo-relative paths (default: current directory)."),
    ] = None,
    max_cost_usd: MaxCostUsd = None,
    history: History = None,
    quarantine_base: Annotated[
        str | None,
        typer.Option(
            "--base",
            metavar="REF",
            help="Read .agentv/quarantine.yaml from this ref, not the work tree (gates.md#quarantine).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Rebuild JUnit/SARIF/Markdown and apply the gates to a finished run; exit per the gates."""
    import tempfile

    from agentv_ci.commands.post_run_console import console_post_run
    from agentv_ci.finishing import PostRunRequest, ReportDestinations, baseline_on_disk
    from agentv_ci.gating import GateOptions
    from agentv_ci.reporting import parse_report_options

    check_max_cost(max_cost_usd)
    reports = parse_report_options(report or [])
    root = repo_root or Path.cwd()
    options = GateOptions(
        threshold=threshold,
        min_pass_rate=min_pass_rate,
        min_mean_score=min_mean_score,
        max_regression=max_regression,
        fail_on_error=fail_on_error,
        max_cost_usd=max_cost_usd,
    )
    gates = _gates(options, root, quarantine_base, history)  # bad input before the results are read
    destinations = ReportDestinations(
        junit=junit, sarif=sarif, markdown=markdown, plugins=tuple(reports), sarif_category=sarif_category
    )
    # The rows are spooled to a temporary copy and read back as the reports need them (flat memory,
    # as `run`).
    with tempfile.TemporaryDirectory(prefix="agentv-ci-report-") as spool:
        finished = console_post_run().finish(
            PostRunRequest(
                summary=_rejudged_run(results, Path(spool), threshold),
                # the baseline compared here, not the one the run recorded (summary.json is left as is)
                baseline=lambda ran: baseline_on_disk(baseline, ran.results, root),
                gates=gates,
                reports=destinations,
                repo_root=root,
            )
        )
        # SystemExit, not typer.Exit: `cli.run_app` runs typer with standalone_mode=False, where typer
        # turns typer.Exit into a return value and the process would exit 0.
        raise SystemExit(int(finished.exit_code))


def _gates(
    options: "GateOptions", root: Path, quarantine_base: str | None, history: list[Path] | None
) -> "GatePolicy":
    """`options` with the trusted quarantine's waivers and the flaky ones `--history` measured; an
    invalid quarantine file or history is bad input (exit 2)."""
    from agentv_ci.finishing import history_gates
    from agentv_ci.selection.quarantine_source import trusted_quarantine

    waivers = trusted_quarantine(root, quarantine_base, os.environ)
    flakiness = None
    if history:
        from agentv_ci.history.flakiness import measure_flakiness
        from agentv_ci.history.runs import read_history

        flakiness = measure_flakiness(read_history(history))
    return history_gates(replace(options, waivers=waivers), flakiness, regression_needs_baseline=True)


def _rejudged_run(results: Path, spool: Path, threshold: float | None) -> "RunSummary":
    """The finished run, its rows spooled under `spool` and re-judged against `--threshold` on the
    way, so the reports agree with it."""
    from agentv_ci.gating import rejudge_result
    from agentv_ci.results.streamed_run import load_run_streamed

    judge = functools.partial(rejudge_result, threshold=threshold) if threshold is not None else None
    return load_run_streamed(results, spool, judge)
