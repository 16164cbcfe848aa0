"""Recording a run's plan while its tests are first read: every job of the run goes to `plan.jsonl`
(results/plan_file.py) before anything is spent, and the jobs still to run are counted for the
runner (`RunNeeds`). Nothing is held per job.

An interrupted run then gets a `not_run` row for each planned job that has none
(`record_not_run`), so its reports, and any later `report`, count them."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

from agentv_ci.errors import InvalidEvalFiles, UsageError
from agentv_ci.model.matrix import MATRIX_HINT, MatrixCount
from agentv_ci.model.result import TestResult
from agentv_ci.model.suite import RepeatStrategy, Suite, Test
from agentv_ci.results.plan_check import NO_RESULT
from agentv_ci.results.plan_file import (
    INTERRUPTED,
    JobFields,
    Plan,
    PlannedJob,
    PlanWriter,
    count_against_plan,
    not_run_row,
    read_plan,
)
from agentv_ci.running.dependency_plan import SuiteSource, order_suites
from agentv_ci.running.estimate import CostEstimator
from agentv_ci.running.needs import RunNeeds
from agentv_ci.running.plan import JobSettingsMemo, PlanOptions, adaptive_strategy, selected
from agentv_ci.running.sharding import shard_of
from agentv_ci.running.waves import Ordering

__all__ = ["PlanRecorder", "record_not_run"]

_BATCH = 1024  # planned jobs handed to the writer at once


class PlanRecorder:
    """Called with each test of the first reading (`on_test`): writes the test's jobs (those of this
    shard) to the plan, counts for each shard how many jobs the selection gives it, and adds the jobs
    without a finished row (`finished`: `--resume`) to `needs`."""

    def __init__(
        self,
        directory: Path,
        options: PlanOptions,
        *,
        finished: set[tuple[str, str, str]],
        needs: RunNeeds,
        dry_run: bool,
        estimator: CostEstimator | None = None,
    ) -> None:
        """`estimator`: told each job to run too (the cost estimate)."""
        self.writer = PlanWriter(directory, shard=options.shard, dry_run=dry_run)
        self.options = options
        self._unsharded = replace(options, shard=None)
        self.finished = finished
        self.needs = needs
        self.estimator = estimator
        self._eval_paths: dict[str, str] = {}
        self.matrix = MatrixCount()
        # A job's targets, attempts and repeat: what `iter_jobs` gives it (the shard aside).
        self._settings_of = JobSettingsMemo(self._unsharded).of
        self._filtered = bool(options.test_ids or options.tags)  # else every test is selected
        self.ordered: set[str] = set()  # the eval paths of the suites with a `depends_on`
        self._batch: list[JobFields] = []  # jobs planned, for the writer (one call a batch, not a job)
        self._suite: Suite | None = None  # the suite of the last test, its eval path and pricing
        self._suite_eval_path: str | None = None
        self._suite_priced: bool | None = None

    def _eval_path(self, suite_path: str) -> str:
        path = self._eval_paths.get(suite_path)
        if path is None:
            # lazy: the graders loaded only when `_eval_path` runs
            from agentv_ci.grading import relative_eval_path

            path = self._eval_paths[suite_path] = relative_eval_path(Path(suite_path))
        return path

    def ordering(self, sources: Iterable[SuiteSource]) -> Ordering:
        """The suites with `depends_on` among `sources`, their selection checked (dependency_plan)."""
        held = [(s.suite, s.tests()) for s in sources if s.suite.path in self.ordered]
        return order_suites(held, self.options, self.finished)

    def __call__(self, suite: Suite, test: Test) -> None:
        options = self.options
        if test.depends_on:
            self.ordered.add(suite.path)
        settings = self._settings_of(test, suite)
        targets = settings.targets
        over = self.matrix.add(len(targets))  # every test counts, as `validate` counts them
        if over is not None:
            # lazy: diagnostic rendering, only when a planned test is refused
            from agentv_ci.validation.diagnostics import at_test
            from agentv_ci.validation.output_formats import render_relative

            raise InvalidEvalFiles([render_relative(at_test("E115", over, test, suite, MATRIX_HINT))])
        if self._filtered and not selected(test, suite, self._unsharded):
            return
        name = test.suite or suite.name
        if options.shard is not None:
            index, count = options.shard
            shard = shard_of(name, test.id, count)
            for _ in targets:
                self.writer.add_to_shard(shard)
            if shard != index:
                return
        repeat, attempts = settings.repeat, settings.attempts
        location = test.location
        line = location.line if location and location.line > 0 else None
        if suite is not self._suite:  # a suite's tests come one after another
            self._suite, self._suite_eval_path, self._suite_priced = suite, self._eval_path(suite.path), None
        eval_path = self._suite_eval_path
        finished, estimator, batch = self.finished, self.estimator, self._batch
        for target in targets:
            batch.append((name, test.id, target, attempts, eval_path, line))
            if not finished or (name, test.id, target) not in finished:
                self.needs.add_test(suite.path, target, test)
                if estimator is not None and self._priced(suite, estimator):
                    self._estimate(suite, test, target, attempts, repeat.strategy if repeat else None)
        if len(batch) >= _BATCH or not self.writer.jobs:  # the first job opens the plan at once
            self._write_batch()

    def _write_batch(self) -> None:
        if self._batch:
            self.writer.add_many(self._batch)
            self._batch = []

    def _priced(self, suite: Suite, estimator: CostEstimator) -> bool:
        """Whether the estimate counts `suite`'s jobs (asked once a suite, when its first job is told:
        the estimate ignores the jobs of a suite whose targets are not priced)."""
        priced = self._suite_priced
        if priced is None:
            priced = self._suite_priced = estimator.targets.any_priced(suite.path)
        return priced

    def _estimate(
        self, suite: Suite, test: Test, target: str, attempts: int, declared: RepeatStrategy | None
    ) -> None:
        """Tell the cost estimate one job; under --adaptive-repeats an adaptive test may use up to
        MAX attempts (the high end, which --budget-usd is checked against), at least its own."""
        assert self.estimator is not None
        options = self._unsharded
        if not options.adaptive_repeats:
            self.estimator.add(suite, test, target, attempts, declared or "pass_at_k")
            return
        strategy, adaptive = adaptive_strategy(declared, options)
        if adaptive:
            most = max(attempts, options.adaptive_repeats)
            self.estimator.add(suite, test, target, most, strategy, early=min(attempts, most))
        else:
            self.estimator.add(suite, test, target, attempts, strategy)

    def commit(self, *, resume: bool) -> Plan:
        """Make the plan durable. A `--resume` keeps every job the plan of the run it continues lists
        (a narrower `--test-id` / `--tag` leaves them not run, never forgotten); resuming the run
        as another shard is a usage error."""
        self._write_batch()
        if resume:
            previous = read_plan(self.writer.directory)
            if previous is not None:
                if previous.shard != self.writer.shard:
                    raise UsageError(
                        f"--resume continues the run in {self.writer.directory}, which was "
                        f"{_shard_text(previous.shard)}; this run is {_shard_text(self.writer.shard)}",
                        hint="resume it with the --shard it was run with, or write to a new -o DIR",
                    )
                self.writer.keep_unlisted(previous)
        return self.writer.commit()


def _shard_text(shard: tuple[int, int] | None) -> str:
    return f"shard {shard[0]}/{shard[1]}" if shard else "not sharded"


def record_not_run(
    plan: Plan,
    row_keys: Iterable[tuple[str, str, str]],
    sink: Callable[[TestResult], None],
    *,
    interrupted: bool,
    dry_run: bool,
) -> int:
    """Hand `sink` a `not_run` row for each planned job without a row (`row_keys`: every row's key,
    all read before the first row is handed over); returns how many. The reason: the run was
    interrupted, else it recorded no result (a dataset edited while it ran)."""
    reason, code = (INTERRUPTED, "interrupted") if interrupted else (NO_RESULT, "no_result")

    def missing(job: PlannedJob) -> None:
        sink(not_run_row(job, reason, code=code, dry_run=dry_run))

    return count_against_plan(plan, row_keys, missing).missing
