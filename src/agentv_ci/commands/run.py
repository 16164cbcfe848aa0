"""`agentv-ci run PATHS...`: run every selected test against its target(s), grade, report, gate."""

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agentv_ci.commands.common_options import AllowOutsideRepo, History, MaxCostUsd, check_max_cost

if TYPE_CHECKING:
    from collections.abc import Callable

    from agentv_ci.finishing import BaselineResolver, Finished
    from agentv_ci.history.flakiness import FlakinessReport
    from agentv_ci.model.estimate import CostEstimate
    from agentv_ci.model.result import RunSummary
    from agentv_ci.model.waivers import WaiverBook
    from agentv_ci.running.session import RunOutcome, RunRequest
    from agentv_ci.selection.select import Selection

# SystemExit, not typer.Exit: `cli.run_app` runs typer with standalone_mode=False, where typer.Exit
# (and typer's own KeyboardInterrupt -> Exit(130)) becomes a return value and the process exits 0.


def run_command(
    paths: Annotated[
        list[Path], typer.Argument(metavar="PATH", help="Eval files or directories.", show_default=False)
    ],
    output: Annotated[
        Path | None,
        typer.Option("-o", "--output", metavar="DIR", help="Run dir (index.jsonl, summary.json)."),
    ] = None,
    target: Annotated[
        list[str] | None, typer.Option("--target", metavar="NAME", help="Target name; repeat for a matrix.")
    ] = None,
    targets_file: Annotated[
        Path | None, typer.Option("--targets", metavar="FILE", help="targets.yaml (file or dir).")
    ] = None,
    grader_target: Annotated[
        str | None, typer.Option("--grader-target", metavar="NAME", help="Target answering every llm-grader.")
    ] = None,
    workers: Annotated[int | None, typer.Option("--workers", help="Tests in flight (all files).")] = None,
    repeat: Annotated[int | None, typer.Option("--repeat", help="Independent attempts per test.")] = None,
    adaptive_repeats: Annotated[
        int | None,
        typer.Option(
            "--adaptive-repeats",
            metavar="MAX",
            help="More attempts, up to MAX, for the tests whose verdict or comparison is undecided.",
        ),
    ] = None,
    timeout: Annotated[
        float | None, typer.Option("--timeout", metavar="SECONDS", help="Per-test timeout.")
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Check the wiring without calling any model: targets resolve as in a real run (no API "
            "key needed), answers are placeholders, scores are not gated; fails only on errors.",
        ),
    ] = False,
    record: Annotated[
        Path | None, typer.Option("--record", metavar="FILE", help="Record live answers (replay JSONL).")
    ] = None,
    cache: Annotated[
        bool | None, typer.Option("--cache/--no-cache", help="On-disk response cache.", show_default=False)
    ] = None,
    cache_dir: Annotated[
        Path | None,
        typer.Option(
            "--cache-dir",
            metavar="DIR",
            help="Response cache directory (default: $AGENTV_CI_CACHE_DIR, else "
            "$XDG_CACHE_HOME/agentv-ci/responses); one holding files git tracks is never used.",
            show_default=False,
        ),
    ] = None,
    test_id: Annotated[
        list[str] | None, typer.Option("--test-id", metavar="GLOB", help="Test id glob (repeatable).")
    ] = None,
    tag: Annotated[
        list[str] | None, typer.Option("--tag", metavar="TAG", help="Only tests with this tag (AND).")
    ] = None,
    shard: Annotated[
        str | None, typer.Option("--shard", metavar="I/N", help="Run one stable shard of n.")
    ] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Skip tests already finished in -o DIR.")] = False,
    budget_usd: Annotated[
        float | None, typer.Option("--budget-usd", metavar="USD", help="Stop after spending this.")
    ] = None,
    max_answer_bytes: Annotated[
        int,
        typer.Option(
            "--max-answer-bytes",
            metavar="N",
            envvar="AGENTV_CI_MAX_ANSWER_BYTES",
            help="Cut each answer at N bytes, with a marker and a note on the test (default 1 MiB).",
        ),
    ] = 1024 * 1024,
    junit: Annotated[Path | None, typer.Option("--junit", metavar="FILE", help="Write JUnit XML.")] = None,
    sarif: Annotated[Path | None, typer.Option("--sarif", metavar="FILE", help="Write SARIF 2.1.0.")] = None,
    sarif_category: Annotated[
        str | None,
        typer.Option(
            "--sarif-category",
            metavar="ID",
            help="SARIF automationDetails.id (default: upload-sarif's category).",
        ),
    ] = None,
    markdown: Annotated[
        Path | None, typer.Option("--markdown", metavar="FILE", help="Write a Markdown summary.")
    ] = None,
    report: Annotated[
        list[str] | None,
        typer.Option(
            "--report",
            metavar="NAME=PATH",
            help="A report by an installed reporter plugin, e.g. html=report.html (repeatable).",
        ),
    ] = None,
    threshold: Annotated[
        float | None,
        typer.Option("--threshold", min=0.0, max=1.0, help="Per-test pass bar (overrides each test's own)."),
    ] = None,
    min_pass_rate: Annotated[
        float | None, typer.Option("--min-pass-rate", min=0.0, max=1.0, help="Gate: minimum pass rate.")
    ] = None,
    min_mean_score: Annotated[
        float | None, typer.Option("--min-mean-score", min=0.0, max=1.0, help="Gate: minimum mean score.")
    ] = None,
    max_regression: Annotated[
        float | None,
        typer.Option("--max-regression", min=0.0, max=1.0, help="Gate: largest score drop vs --baseline."),
    ] = None,
    max_cost_usd: MaxCostUsd = None,
    baseline: Annotated[
        Path | None,
        typer.Option(
            "--baseline",
            metavar="RESULTS",
            help="Baseline index.jsonl or run dir (its recorded usage also sharpens the cost estimate; "
            "default: each eval file's committed sidecar, x.eval.baseline.jsonl, where there is one).",
        ),
    ] = None,
    update_baseline: Annotated[
        bool,
        typer.Option(
            "--update-baseline",
            help="Write each eval file's committed sidecar (x.eval.baseline.jsonl) from this run "
            "(only a complete run: no errors, nothing left unrun, no regression beyond --max-regression).",
        ),
    ] = False,
    fail_on_error: Annotated[
        bool,
        typer.Option("--fail-on-error/--no-fail-on-error", help="Execution errors are inconclusive (3)."),
    ] = True,
    no_fail: Annotated[
        bool, typer.Option("--no-fail", help="Exit 0 whatever the gates say (bad input still exits 2).")
    ] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress; each failing test in one summary line.")
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="A line per passing test too, and more of each failure.")
    ] = False,
    changed: Annotated[
        bool | None,
        typer.Option(
            "--changed/--no-changed",
            help="Only evals the changes since --base affect (selection.md); --no-changed: all of them.",
            show_default=False,
        ),
    ] = None,
    base: Annotated[
        str | None,
        typer.Option(
            "--base",
            metavar="REF",
            help="Base ref for --changed (implies it) and the trusted .agentv/quarantine.yaml.",
            show_default=False,
        ),
    ] = None,
    head: Annotated[
        str | None, typer.Option("--head", metavar="REF", help="Head ref for --changed (default HEAD).")
    ] = None,
    include_uncommitted: Annotated[
        bool, typer.Option("--include-uncommitted", help="--changed counts work-tree changes too.")
    ] = False,
    allow_outside_repo: AllowOutsideRepo = None,
    pass_env: Annotated[
        list[str] | None,
        typer.Option(
            "--pass-env",
            help="Hand this environment variable to graders, hooks and cli targets (repeatable).",
        ),
    ] = None,
    history: History = None,
) -> None:
    """Run eval files against their targets, grade the answers, gate the build and write reports."""
    from agentv_ci.commands.post_run_console import console_post_run
    from agentv_ci.errors import ExitCode
    from agentv_ci.finishing import PostRunRequest, ReportDestinations, history_gates
    from agentv_ci.gating import GateOptions, check_gate_flags
    from agentv_ci.results.results_file import load_run

    # The stages: the flags -> what to run -> the run -> the post-run (baseline, gates, reports, exit).
    _check_flags(
        repeat=repeat,
        target=target,
        workers=workers,
        adaptive_repeats=adaptive_repeats,
        timeout=timeout,
        budget_usd=budget_usd,
        max_answer_bytes=max_answer_bytes,
        max_cost_usd=max_cost_usd,
        quiet=quiet,
        verbose=verbose,
        update_baseline=update_baseline,
        dry_run=dry_run,
        shard=shard,
        test_id=test_id,
        tag=tag,
    )
    from agentv_ci.reporting import parse_report_options

    reports = parse_report_options(report or [])
    if pass_env:
        from agentv_ci.security.child_env import pass_through

        pass_through(pass_env)
    baseline_summary = load_run(baseline) if baseline is not None else None
    flakiness = _flakiness(history)  # bad history is bad input before anything runs
    changed = changed if changed is not None else base is not None
    waivers = _quarantine(base, changed)  # an invalid one is bad input before anything runs
    paths, selection = _what_to_run(
        paths,
        changed=changed,
        base=base,
        head=head,
        include_uncommitted=include_uncommitted,
        targets_file=targets_file,
        target=target,
    )
    if max_regression is not None and baseline is None and (selection is None or selection.selected):
        from agentv_ci.commands.sidecar_steps import sidecars_exist

        check_gate_flags(max_regression, sidecars_exist(paths))
    request = _run_request(
        paths,
        selection,
        baseline_summary,
        output=output,
        target=target,
        test_id=test_id,
        tag=tag,
        shard=shard,
        repeat=repeat,
        threshold=threshold,
        timeout=timeout,
        adaptive_repeats=adaptive_repeats,
        targets_file=targets_file,
        grader_target=grader_target,
        workers=workers,
        dry_run=dry_run,
        record=record,
        cache=cache,
        cache_dir=cache_dir,
        resume=resume,
        budget_usd=budget_usd,
        quiet=quiet,
        verbose=verbose,
        allow_outside_repo=allow_outside_repo,
        max_answer_bytes=max_answer_bytes,
    )
    outcome, interrupted = _execute(request)
    finishing = console_post_run()
    post_request = PostRunRequest(
        summary=outcome.summary,
        baseline=_run_baseline(baseline, baseline_summary, update_baseline=update_baseline),
        gates=history_gates(
            GateOptions(
                threshold=threshold,
                min_pass_rate=min_pass_rate,
                min_mean_score=min_mean_score,
                max_regression=max_regression,
                fail_on_error=fail_on_error,
                max_cost_usd=max_cost_usd,
                waivers=waivers,
            ),
            flakiness,
        ),
        reports=ReportDestinations(
            junit=junit, sarif=sarif, markdown=markdown, plugins=tuple(reports), sarif_category=sarif_category
        ),
        repo_root=Path.cwd(),
        run_dir=outcome.output_dir,
        warnings=tuple(outcome.warnings),
    )
    if selection is not None and not selection.selected:
        finishing.compare(post_request)  # the baseline asked for is still recorded in summary.json
        typer.echo(f"results: {outcome.output_dir / 'index.jsonl'} (empty)")
        raise SystemExit(int(ExitCode.OK))
    finished = finishing.finish(post_request)
    typer.echo(f"results: {outcome.output_dir / 'index.jsonl'}")
    raise SystemExit(
        _exit_code(
            finished,
            interrupted=interrupted,
            update_baseline=update_baseline,
            max_regression=max_regression,
            no_fail=no_fail,
        )
    )


def _check_flags(
    *,
    repeat: int | None,
    target: list[str] | None,
    workers: int | None,
    adaptive_repeats: int | None,
    timeout: float | None,
    budget_usd: float | None,
    max_answer_bytes: int,
    max_cost_usd: float | None,
    quiet: bool,
    verbose: bool,
    update_baseline: bool,
    dry_run: bool,
    shard: str | None,
    test_id: list[str] | None,
    tag: list[str] | None,
) -> None:
    """The flags on their own and together, before anything is read: out of range or in conflict is
    bad input (exit 2)."""
    from agentv_ci.errors import UsageError
    from agentv_ci.model.bounds import check_run_flags

    check_run_flags(repeat=repeat, targets=target or (), workers=workers)
    _check_limits(
        adaptive_repeats=adaptive_repeats,
        timeout=timeout,
        budget_usd=budget_usd,
        max_answer_bytes=max_answer_bytes,
    )
    check_max_cost(max_cost_usd)
    if quiet and verbose:
        raise UsageError("-q and -v cannot be used together")
    if update_baseline:
        from agentv_ci.commands.sidecar_steps import check_update_flags

        check_update_flags(dry_run, shard, test_id, tag)


def _what_to_run(
    paths: list[Path],
    *,
    changed: bool,
    base: str | None,
    head: str | None,
    include_uncommitted: bool,
    targets_file: Path | None,
    target: list[str] | None,
) -> "tuple[list[Path], Selection | None]":
    """The eval files to run: `paths`, or with `--changed` those of them the change affects."""
    from agentv_ci.errors import UsageError

    if changed:
        selection = _changed_selection(
            paths,
            base=base,
            head=head,
            include_uncommitted=include_uncommitted,
            targets=targets_file,
            target_names=tuple(target or ()),
        )
        return [picked.path for picked in selection.selected], selection
    if head is not None or include_uncommitted:
        raise UsageError("--head and --include-uncommitted need --changed (or --base)")
    return paths, None


def _run_request(
    paths: list[Path],
    selection: "Selection | None",
    baseline_summary: "RunSummary | None",
    *,
    output: Path | None,
    target: list[str] | None,
    test_id: list[str] | None,
    tag: list[str] | None,
    shard: str | None,
    repeat: int | None,
    threshold: float | None,
    timeout: float | None,
    adaptive_repeats: int | None,
    targets_file: Path | None,
    grader_target: str | None,
    workers: int | None,
    dry_run: bool,
    record: Path | None,
    cache: bool | None,
    cache_dir: Path | None,
    resume: bool,
    budget_usd: float | None,
    quiet: bool,
    verbose: bool,
    allow_outside_repo: list[Path] | None,
    max_answer_bytes: int,
) -> "RunRequest":
    """What to run, and how: the plan (targets, tests, tags, shard, repeats) and the run's settings."""
    from agentv_ci.running.plan import PlanOptions
    from agentv_ci.running.recorded_usage import RecordedUsage
    from agentv_ci.running.session import RunRequest
    from agentv_ci.running.sharding import parse_shard

    return RunRequest(
        paths=paths,
        output_dir=output,
        plan=PlanOptions(
            targets=tuple(target or ()),
            test_ids=tuple(test_id or ()),
            tags=tuple(tag or ()),
            shard=parse_shard(shard) if shard else None,
            repeat=repeat,
            threshold=threshold,
            timeout_s=timeout,
            adaptive_repeats=adaptive_repeats,
        ),
        targets_file=targets_file,
        grader_target=grader_target,
        workers=workers,
        dry_run=dry_run,
        record=record,
        cache=cache,
        cache_dir=cache_dir,
        resume=resume,
        budget_usd=budget_usd,
        quiet=quiet,
        verbose=verbose,
        selection=selection.as_summary_selection() if selection is not None else None,
        unselecting=selection.unselecting if selection is not None else (),
        allow_outside=tuple(allow_outside_repo or ()),
        max_answer_bytes=max_answer_bytes,
        recorded_usage=RecordedUsage.of(baseline_summary.results) if baseline_summary is not None else None,
        on_estimate=_estimate_printer(dry_run=dry_run, quiet=quiet),
        baseline_counts=_adaptive_baseline(adaptive_repeats, baseline_summary),
    )


def _check_limits(
    *, adaptive_repeats: int | None, timeout: float | None, budget_usd: float | None, max_answer_bytes: int
) -> None:
    """The numeric flags `check_run_flags` does not cover; out of range is bad input (exit 2)."""
    from agentv_ci.errors import UsageError
    from agentv_ci.model.bounds import MAX_ATTEMPTS
    from agentv_ci.targets.answer_cap import MAX_ANSWER_BYTES_LIMIT

    if adaptive_repeats is not None and not 1 <= adaptive_repeats <= MAX_ATTEMPTS:
        raise UsageError(
            f"--adaptive-repeats must be from 1 to {MAX_ATTEMPTS} attempts, got {adaptive_repeats}"
        )
    if timeout is not None and not 0 < timeout < float("inf"):
        raise UsageError(f"--timeout must be a number of seconds greater than 0, got {timeout}")
    if budget_usd is not None and not 0 < budget_usd < float("inf"):
        raise UsageError(f"--budget-usd must be an amount greater than 0, got {budget_usd}")
    if not 1024 <= max_answer_bytes <= MAX_ANSWER_BYTES_LIMIT:
        raise UsageError(
            f"--max-answer-bytes must be between 1024 and {MAX_ANSWER_BYTES_LIMIT}, got {max_answer_bytes}"
        )


def _execute(request: "RunRequest") -> "tuple[RunOutcome, bool]":
    """The run's outcome, and whether a signal interrupted it (the reports are still written then,
    the tests not run counted); a Ctrl-C before there is an outcome exits 130 at once."""
    from agentv_ci.errors import ExitCode
    from agentv_ci.running.session import RunInterrupted, execute_run

    try:
        return execute_run(request), False
    except RunInterrupted as stopped:
        typer.echo("interrupted; finished results are on disk", err=True)
        return stopped.outcome, True
    except KeyboardInterrupt:
        typer.echo("interrupted; finished results are on disk", err=True)
        raise SystemExit(int(ExitCode.INTERRUPTED)) from None


def _exit_code(
    finished: "Finished",
    *,
    interrupted: bool,
    update_baseline: bool,
    max_regression: float | None,
    no_fail: bool,
) -> int:
    """The gates' exit code, once --update-baseline wrote the sidecars (never a pass when it could
    not, nor when the run was interrupted)."""
    from agentv_ci.errors import ExitCode

    summary, decision = finished.summary, finished.decision
    updated = True
    if update_baseline:  # an interrupted run is refused (and says so)
        from agentv_ci.commands.sidecar_steps import update_sidecars

        updated = update_sidecars(summary, decision, max_regression)
    if interrupted:
        return int(ExitCode.INTERRUPTED)
    if not updated:
        return int(decision.exit_code) or int(ExitCode.INCONCLUSIVE)
    if no_fail:
        return int(ExitCode.OK)
    return int(decision.exit_code)


def _run_baseline(
    path: Path | None, loaded: "RunSummary | None", *, update_baseline: bool
) -> "BaselineResolver":
    """`--baseline` (read before the run), else each eval file's committed sidecar where there is one.
    A broken sidecar is bad input (exit 2), except with --update-baseline, which replaces it."""
    from agentv_ci.errors import LoadError
    from agentv_ci.finishing import ComparedBaseline, baseline_on_disk

    def resolve(summary: "RunSummary") -> ComparedBaseline:
        try:
            return baseline_on_disk(path, summary.results, Path.cwd(), loaded=loaded)
        except LoadError as exc:
            if not update_baseline:
                raise
            typer.echo(f"warning: {exc.render()}", err=True)
            return ComparedBaseline()

    return resolve


def _adaptive_baseline(
    adaptive_repeats: int | None, baseline: "RunSummary | None"
) -> "dict[tuple[str, str, str], tuple[int, int]]":
    """--adaptive-repeats against --baseline: its pass counts, which decide when a comparison is."""
    if not adaptive_repeats or baseline is None:
        return {}
    from agentv_ci.running.adaptive import baseline_counts

    return baseline_counts(baseline.results)


def _estimate_printer(*, dry_run: bool, quiet: bool) -> "Callable[[CostEstimate], None]":
    """What the CLI shows of the cost estimate before anything runs: the whole table on a dry run
    (stdout), else the total (stderr; none with --quiet)."""

    def show(estimate: "CostEstimate") -> None:
        from agentv_ci.model.estimate_text import estimate_table, estimate_total

        if dry_run:
            typer.echo("\n".join(estimate_table(estimate)))
        elif not quiet:
            typer.echo(f"estimated cost: {estimate_total(estimate)}", err=True)

    return show


def _quarantine(base: str | None, changed: bool) -> "WaiverBook | None":
    """The trusted quarantine: from `--base` (or the base `--changed` selects against), else the
    work tree's file (selection/quarantine_source.py)."""

    from agentv_ci.selection.quarantine_source import trusted_quarantine

    trusted_base = base
    if changed:
        from agentv_ci.selection.discover import base_ref

        trusted_base = base_ref(base, os.environ)
    return trusted_quarantine(Path.cwd(), trusted_base, os.environ)


def _flakiness(history: list[Path] | None) -> "FlakinessReport | None":
    """The tests the `--history` runs (oldest first) measured, or None without history."""
    if not history:
        return None
    from agentv_ci.history.flakiness import measure_flakiness
    from agentv_ci.history.runs import read_history

    return measure_flakiness(read_history(history))


def _changed_selection(
    paths: list[Path],
    *,
    base: str | None,
    head: str | None,
    include_uncommitted: bool,
    targets: Path | None,
    target_names: tuple[str, ...],
) -> "Selection":
    """The evals under `paths` the changes affect; prints what was selected (or that nothing was)."""

    from agentv_ci.selection.discover import base_ref, discover_changed_evals
    from agentv_ci.selection.render import headline, selected_line, unselecting_lines

    selection = discover_changed_evals(
        paths,
        base=base_ref(base, os.environ),
        head=head or "HEAD",
        include_uncommitted=include_uncommitted,
        targets_file=targets,
        checked_out_only=True,
        target_names=target_names,
    )
    typer.echo(headline(selection), err=bool(selection.selected))
    for picked in selection.selected:
        typer.echo(selected_line(picked.repo_path, picked.reasons), err=True)
    for line in unselecting_lines(selection):
        typer.echo(line, err=True)
    return selection
