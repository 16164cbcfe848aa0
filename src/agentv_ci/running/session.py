"""One `agentv-ci run`: load -> plan -> run (streaming to index.jsonl) -> summary -> reports -> gate.

Stages never print; `on_line` receives the progress lines the CLI shows. Ctrl-C or SIGTERM stops
scheduling, cancels tests in flight and leaves every finished result (and a summary.json) on disk
(running/interrupts.py); before the tests run they stop loading and planning at once.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from agentv_ci.clock import now_seconds
from agentv_ci.deadlines import default_test_timeout_s
from agentv_ci.errors import ConfigError, UsageError
from agentv_ci.model.bounds import check_run_flags
from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.model.suite import Suite
from agentv_ci.results.plan_check import NOTHING_SELECTED
from agentv_ci.running.adaptive import AdaptiveRepeats
from agentv_ci.running.budget import Budget
from agentv_ci.running.cache import open_cache
from agentv_ci.running.estimate import CostEstimator, settle_estimate
from agentv_ci.running.gc_tuning import fewer_gc_passes
from agentv_ci.running.interrupts import StopSignals
from agentv_ci.running.needs import RunNeeds
from agentv_ci.running.plan import Job, PlanOptions, iter_jobs
from agentv_ci.running.plan_record import PlanRecorder, record_not_run
from agentv_ci.running.resume import (
    finished_keys,
    prepare_index_for_resume,
    previous_results,
    previous_spend,
)
from agentv_ci.running.scheduler import Runner, RunnerOptions
from agentv_ci.running.selected_suites import LoadedSuite, check_selected_suites
from agentv_ci.targets.answer_cap import DEFAULT_MAX_ANSWER_BYTES
from agentv_ci.targets.replay import ReplayRecorder

if TYPE_CHECKING:
    from agentv_ci.model.estimate import CostEstimate
    from agentv_ci.results.stored_results import StoredResults
    from agentv_ci.results.tally import ResultsTally
    from agentv_ci.running.cache import ResponseCache
    from agentv_ci.running.progress import Progress
    from agentv_ci.running.recorded_usage import RecordedUsage
    from agentv_ci.running.waves import Ordering

DEFAULT_RUNS_DIR = Path(".agentv-ci") / "runs"


@dataclass
class RunRequest:
    paths: Sequence[Path]
    output_dir: Path | None = None
    plan: PlanOptions = field(default_factory=PlanOptions)
    targets_file: Path | None = None
    grader_target: str | None = None
    workers: int | None = None
    dry_run: bool = False
    record: Path | None = None
    cache: bool | None = None
    cache_dir: Path | None = None
    cache_watch: Sequence[str] = ()  # select_all_on globs: the files they match key every answer
    resume: bool = False
    budget_usd: float | None = None
    env: Mapping[str, str] | None = None
    progress_stream: TextIO | None = None
    quiet: bool = False
    verbose: bool = False  # -v: a line per passing test, more of each failure
    # Change-based selection: eval path -> why it ran (None: explicit paths; `paths` may be empty).
    selection: dict[str, str] | None = None
    unselecting: Sequence[str] = ()  # the changed files that selected no eval, for the reports
    # Directories outside the repository that eval files may reference (`--allow-outside-repo`).
    allow_outside: Sequence[Path] = ()
    max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES  # --max-answer-bytes
    recorded_usage: RecordedUsage | None = None  # the baseline's output tokens (the cost estimate)
    on_estimate: Callable[[CostEstimate], None] | None = None  # told the estimate before anything runs
    # --adaptive-repeats: the baseline's pass counts per test x target (running/adaptive.py)
    baseline_counts: Mapping[tuple[str, str, str], tuple[int, int]] = field(default_factory=dict)
    # The event gives no secrets (a fork's pull request): a test whose target or judge needs a missing
    # API key gets a `not_run` row (`needs_secret`) instead of stopping the run (running/withheld_secrets.py).
    secrets_withheld: bool = False


@dataclass
class RunOutcome:
    summary: RunSummary
    output_dir: Path
    warnings: list[str]
    resumed: int = 0
    interrupted: bool = False


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM stopped the run; `outcome`: what it wrote (every planned job without a
    finished row has a `not_run` row, and summary.json says `interrupted`), for the reports."""

    def __init__(self, outcome: RunOutcome) -> None:
        super().__init__("interrupted")
        self.outcome = outcome


def timestamp_dir() -> Path:
    return DEFAULT_RUNS_DIR / datetime.now(UTC).strftime("%Y-%m-%dT%H-%M-%S-%fZ")


def latest_run_dir() -> Path | None:
    if not DEFAULT_RUNS_DIR.is_dir():
        return None
    runs = sorted(p for p in DEFAULT_RUNS_DIR.iterdir() if (p / "index.jsonl").is_file())
    return runs[-1] if runs else None


def _workers(request: RunRequest, suites: list[Suite]) -> int:
    if request.workers is not None:
        if request.workers < 1:
            raise UsageError("--workers must be at least 1")
        return request.workers
    declared = [s.execution.workers for s in suites if s.execution.workers]
    return max(declared) if declared else 10


def _budget(request: RunRequest, suites: list[Suite]) -> Budget:
    if request.budget_usd is not None:
        if request.budget_usd <= 0:
            raise UsageError("--budget-usd must be greater than 0")
        return Budget(request.budget_usd)
    declared = [s.execution.budget_usd for s in suites if s.execution.budget_usd]
    return Budget(min(declared) if declared else None)


def _budget_left(request: RunRequest, output_dir: Path, budget: Budget) -> float | None:
    """The budget the estimate's low end must fit in: less what a resumed run already spent. None
    when there is none, or nothing is left (then the run stops at once: budget reached, exit 3)."""
    if budget.limit_usd is None or not request.resume:
        return budget.limit_usd
    left = budget.limit_usd - previous_spend(output_dir, 1)[0]
    return left if left > 0 else None


def execute_run(request: RunRequest) -> RunOutcome:
    """Run everything `request` selects. Raises `LoadError`/`ConfigError`/`UsageError` before any
    test runs on bad input; `RunInterrupted` (a `KeyboardInterrupt`) after writing what finished,
    and a `not_run` row for each planned job that did not, when interrupted."""
    with fewer_gc_passes():
        return _execute_run(request)


def _execute_run(request: RunRequest) -> RunOutcome:
    started = time.perf_counter()
    started_at = now_seconds()
    default_test_timeout_s()  # a bad AGENTV_CI_DEFAULT_TIMEOUT is exit 2 before anything runs
    plan = request.plan
    check_run_flags(repeat=plan.repeat, targets=plan.targets, workers=request.workers)
    if request.selection is not None and not request.paths:
        return _nothing_selected(request, started_at)
    load_warnings: list[str] = []
    output_dir = request.output_dir
    if request.resume:
        output_dir = output_dir or latest_run_dir()
        if output_dir is None:
            raise UsageError("--resume found no previous run", hint="pass -o DIR of the run to resume")
    output_dir = output_dir or timestamp_dir()
    finished = finished_keys(output_dir) if request.resume else set()
    needs = RunNeeds()
    # iter_jobs' selection and targets, without building the jobs (they are planned again later):
    # each job is written to the plan (plan.jsonl, committed before anything runs) and counted
    estimator = CostEstimator(
        request.targets_file,
        request.env,
        request.grader_target,
        request.recorded_usage,
        cache=request.cache,
        cache_dir=request.cache_dir,
        cache_watch=request.cache_watch,
    )
    recording = PlanRecorder(
        output_dir, plan, finished=finished, needs=needs, dry_run=request.dry_run, estimator=estimator
    )
    start = _RunStart(output_dir, finished, load_warnings, started, started_at)
    try:
        return _run_planned(request, start, recording)
    finally:
        recording.writer.abort()  # nothing left to remove once committed


@dataclass(frozen=True)
class _RunStart:
    """What was settled before the run: where it writes, the rows `--resume` already has, the load's
    warnings so far, and when it began."""

    output_dir: Path
    finished: set[tuple[str, str, str]]
    load_warnings: list[str]
    started: float
    started_at: str


@dataclass(frozen=True)
class _FirstReading:
    """Every selected test built and checked (bad input stops here, before anything runs), counted
    into the plan, with the budget, the estimate and the order it allows."""

    loaded: list[LoadedSuite]
    suites: list[Suite]
    budget: Budget
    estimate: CostEstimate | None
    ordering: Ordering
    stops: StopSignals
    jobs: Iterable[Job]


def _run_planned(request: RunRequest, start: _RunStart, recording: PlanRecorder) -> RunOutcome:
    """The stages: first reading -> earlier rows (resume) -> the runner -> the run -> rows for what
    did not run -> summary.json."""
    # lazy: the results store and progress, only when `_run_planned` runs
    from agentv_ci.results.stored_results import StoredResults
    from agentv_ci.running.row_sink import RowSink

    output_dir = start.output_dir
    first = _first_reading(request, start, recording)
    budget = first.budget
    previous = _previous_rows(request, output_dir, budget)
    use_cache = request.cache if request.cache is not None else any(s.execution.cache for s in first.suites)
    cache = open_cache(request.cache_dir, start.load_warnings) if use_cache and not request.dry_run else None
    recorder = ReplayRecorder(request.record) if request.record else None
    rows = RowSink(_progress(request, recording.needs, budget))
    for result in previous:
        rows.count(result)
    previous_rows = len(previous)
    written = (output_dir, cache.directory if cache is not None else None, request.record)
    protected = tuple(p.absolute() for p in written if p is not None)  # a workspace reset never touches it
    options = _runner_options(request, first.suites, output_dir, budget, cache, recorder, protected)
    runner = Runner(
        first.jobs, options, rows.append, needs=recording.needs, ordering=first.ordering.keep(previous)
    )
    del previous
    runner.prepare()  # unknown targets / missing API keys fail here, before anything runs or is written
    (output_dir / "summary.json").unlink(missing_ok=True)  # written again at the end: none if killed
    planned = recording.commit(resume=request.resume)  # durable before anything is spent
    index = output_dir / "index.jsonl"
    with rows.writing(index):
        interrupted = _drive_to_the_end(runner, first.stops, rows.progress, recorder)
    for source in first.loaded:
        source.close()
    # Each planned job without a row gets a `not_run` one, so every report counts it. Checked (a
    # sort of both sides' keys) only when a job may lack its row: one row per job otherwise.
    tally, keys = rows.tally, rows.keys
    if interrupted or tally.results != planned.listed:
        stored = StoredResults(index, tally, count=tally.results, unique_keys=keys.unique, own=True)
        with rows.writing(index, shown=False):
            record_not_run(
                planned, stored.keys(), rows.append, interrupted=interrupted, dry_run=request.dry_run
            )
    results = StoredResults(
        index, tally, count=tally.results, unique_keys=keys.unique, own=True, written=rows.written
    )
    summary = _summary(
        request, start, results, tally, planned.listed, budget, runner, cache, first.estimate, interrupted
    )
    return _finish(summary, output_dir, start, runner, previous_rows)


def _summary(
    request: RunRequest,
    start: _RunStart,
    results: StoredResults,
    tally: ResultsTally,
    planned: int,
    budget: Budget,
    runner: Runner,
    cache: ResponseCache | None,
    estimate: CostEstimate | None,
    interrupted: bool,
) -> RunSummary:
    """The run's summary: its rows (read back from index.jsonl) with the tally's figures, the plan's
    size, the budget and the cache."""
    return RunSummary(
        results=results,
        started_at=start.started_at,
        ended_at=now_seconds(),
        duration_ms=(time.perf_counter() - start.started) * 1000,
        dry_run=request.dry_run or tally.dry_run,  # as summary_from_results: any dry-run row marks it
        not_run=tally.not_run_status,
        planned=planned,
        budget_exhausted=not request.dry_run
        and (budget.reached or (budget.exhausted and runner.not_run > 0)),
        budget_usd=budget.limit_usd,
        interrupted=interrupted,
        selection=request.selection or {},
        unselecting=list(request.unselecting),
        cache=cache.use() if cache is not None else None,
        estimate=estimate,
        spent_usd=None if request.dry_run else round(budget.spent_before + budget.spent_usd, 6),
        unpriced=0 if request.dry_run else budget.unpriced,
    )


def _first_reading(request: RunRequest, start: _RunStart, recording: PlanRecorder) -> _FirstReading:
    """Every test built and checked and counted; the budget (its estimate's low end above the budget
    is refused here, before any file changes) and the order `depends_on` asks for."""
    paths, env, outside = request.paths, request.env, request.allow_outside
    loaded = check_selected_suites(paths, env, start.load_warnings, outside, recording)
    suites = [source.suite for source in loaded]
    budget = _budget(request, suites)
    estimate = settle_estimate(
        recording.estimator,
        budget_usd=_budget_left(request, start.output_dir, budget),
        on_estimate=request.on_estimate,
    )
    ordering = recording.ordering(loaded)  # depends_on: a left-out dependency is refused here (exit 2)
    stops = StopSignals()  # taking the tests back stops at once on SIGINT/SIGTERM
    jobs = _jobs_to_run(loaded, request.plan, stops, start.finished)
    return _FirstReading(loaded, suites, budget, estimate, ordering, stops, jobs)


def _previous_rows(request: RunRequest, output_dir: Path, budget: Budget) -> list[TestResult]:
    """`--resume`: the rows already in index.jsonl (read strictly: a row that is not a result stops
    the run) and what they spent. Otherwise a new run into an old directory starts afresh."""
    if not request.resume:
        (output_dir / "index.jsonl").unlink(missing_ok=True)
        return []
    prepare_index_for_resume(output_dir / "index.jsonl")
    previous = previous_results(output_dir)
    budget.spent_before, budget.unpriced = previous_spend(output_dir, len(previous))
    return previous


def _runner_options(
    request: RunRequest,
    suites: list[Suite],
    output_dir: Path,
    budget: Budget,
    cache: ResponseCache | None,
    recorder: ReplayRecorder | None,
    protected: tuple[Path, ...],
) -> RunnerOptions:
    plan = request.plan
    return RunnerOptions(
        workers=_workers(request, suites),
        dry_run=request.dry_run,
        targets_file=request.targets_file,
        grader_target=request.grader_target,
        cache=cache,
        budget=budget,
        recorder=recorder,
        env=request.env,
        run_id=output_dir.name,
        max_answer_bytes=request.max_answer_bytes,
        cache_watch=request.cache_watch,
        adaptive=AdaptiveRepeats(plan.adaptive_repeats, request.baseline_counts)
        if plan.adaptive_repeats
        else None,
        secrets_withheld=request.secrets_withheld,
        protected=protected,
    )


def _progress(request: RunRequest, needs: RunNeeds, budget: Budget) -> Progress:
    # lazy: the progress line, only when a run runs
    from agentv_ci.running.progress import Progress

    return Progress(
        needs.jobs,
        stream=request.progress_stream or sys.stderr,
        quiet=request.quiet,
        verbose=request.verbose,
        budget=None if request.dry_run else budget,
    )


def _drive_to_the_end(
    runner: Runner, stops: StopSignals, progress: Progress | None, recorder: ReplayRecorder | None
) -> bool:
    """Run every job; True when SIGINT/SIGTERM stopped the run (what finished is written)."""
    try:
        with stops.installed():
            asyncio.run(_drive(runner, stops))
    except (KeyboardInterrupt, asyncio.CancelledError):
        return True
    finally:
        if progress is not None:
            progress.finish()
        if recorder is not None:
            recorder.close()
    return False


def _finish(
    summary: RunSummary, output_dir: Path, start: _RunStart, runner: Runner, previous_rows: int
) -> RunOutcome:
    """summary.json written; the outcome (or `RunInterrupted` carrying it)."""
    # lazy: the results store, only when a run ends
    from agentv_ci.results.results_file import write_summary_json

    write_summary_json(output_dir / "summary.json", summary)
    more_cut = runner.answer_cap.summary_warning()
    warnings = [*start.load_warnings, *runner.warnings, *([more_cut] if more_cut else [])]
    outcome = RunOutcome(
        summary, output_dir, warnings, resumed=previous_rows, interrupted=summary.interrupted
    )
    if summary.interrupted:
        raise RunInterrupted(outcome)
    return outcome


def _jobs_to_run(
    loaded: Sequence[LoadedSuite], plan: PlanOptions, stops: StopSignals, finished: set[tuple[str, str, str]]
) -> Iterator[Job]:
    """The jobs of `loaded`, planned as the workers take them; those with a finished row (`--resume`)
    left out. A stop request ends them before the next test is taken."""
    for source in loaded:
        jobs = iter_jobs(source.suite, source.tests(), plan, stops=stops)
        if finished:  # only a resumed run has any: no key to build per job otherwise
            jobs = (job for job in jobs if job.key not in finished)
        yield from jobs


def _nothing_selected(request: RunRequest, started_at: str) -> RunOutcome:
    """A change-based run that selected no eval: its record (results/skipped_run.py), so later
    steps (reports, the PR comment, artifact upload, merging shards) find a run."""
    # lazy: `results.skipped_run` loaded only when `_nothing_selected` runs
    from agentv_ci.results.skipped_run import write_skipped_run

    output_dir = request.output_dir or timestamp_dir()
    summary = write_skipped_run(
        output_dir, NOTHING_SELECTED, shard=request.plan.shard, dry_run=request.dry_run, started_at=started_at
    )
    return RunOutcome(summary, output_dir, [])


async def _drive(runner: Runner, stops: StopSignals) -> None:
    """Run the tests; SIGINT or SIGTERM cancels this task (running/interrupts.py)."""
    stops.attach()
    await runner.run()


__all__ = ["ConfigError", "Job", "RunInterrupted", "RunOutcome", "RunRequest", "execute_run"]
