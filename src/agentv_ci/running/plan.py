"""Plan: expand suites into jobs (test x target), apply filters, shards and resume."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import NamedTuple, Protocol

import msgspec

from agentv_ci.model.matrix import DEFAULT_TARGET, targets_for
from agentv_ci.model.suite import ExecutionSpec, RepeatSpec, RepeatStrategy, Suite, Test
from agentv_ci.running.sharding import shard_of
from agentv_ci.scoring import effective_threshold

__all__ = [
    "DEFAULT_TARGET",
    "Job",
    "JobSettings",
    "JobSettingsMemo",
    "PlanOptions",
    "StopRequest",
    "adaptive_strategy",
    "iter_jobs",
    "job_settings",
    "plan_jobs",
    "selected",
    "targets_for",
]


class Job(msgspec.Struct, frozen=True):
    """One test against one target; `attempts` independent attempts combined by `strategy`. A Struct,
    not a frozen dataclass: one is built per job, and a frozen dataclass's `__init__` costs ten times
    as much."""

    suite: Suite
    test: Test
    target: str
    attempts: int = 1
    strategy: RepeatStrategy = "pass_at_k"
    threshold: float = 0.8
    timeout_s: float | None = None
    cost_limit_usd: float | None = None
    adaptive: bool = False  # --adaptive-repeats: `attempts` is where it starts (statistics/sequential.py)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.test.suite or self.suite.name, self.test.id, self.target)


@dataclass(frozen=True)
class PlanOptions:
    targets: Sequence[str] = ()  # --target (repeatable): overrides every file
    test_ids: Sequence[str] = ()  # --test-id globs (OR)
    tags: Sequence[str] = ()  # --tag (AND)
    shard: tuple[int, int] | None = None
    repeat: int | None = None
    threshold: float | None = None
    timeout_s: float | None = None
    adaptive_repeats: int | None = None  # MAX attempts of --adaptive-repeats


# Their verdict is "any" / "every" of a declared count: more attempts would change what it means.
FIXED_COUNT_STRATEGIES: frozenset[RepeatStrategy] = frozenset({"pass_at_k", "pass_all"})


def adaptive_strategy(declared: RepeatStrategy | None, options: PlanOptions) -> tuple[RepeatStrategy, bool]:
    """(strategy, adaptive) of a test with `declared` strategy (None: no `repeat`). Under
    --adaptive-repeats a test without one is judged on its attempts' mean (pass@k over a growing k
    would let a flaky test pass by retrying)."""
    if not options.adaptive_repeats:
        return declared or "pass_at_k", False
    strategy: RepeatStrategy = declared or "mean"
    return strategy, strategy not in FIXED_COUNT_STRATEGIES


def selected(test: Test, suite: Suite, options: PlanOptions) -> bool:
    if options.test_ids and not any(fnmatchcase(test.id, pattern) for pattern in options.test_ids):
        return False
    if options.tags:
        tags = set(test.tags) | set(suite.tags)
        if not all(tag in tags for tag in options.tags):
            return False
    if options.shard is not None:
        index, count = options.shard
        if shard_of(test.suite or suite.name, test.id, count) != index:
            return False
    return True


def plan_jobs(suites: Iterable[Suite], options: PlanOptions) -> list[Job]:
    """Every job of `suites` (their tests as loaded), in order."""
    return [job for suite in suites for job in iter_jobs(suite, suite.tests, options)]


class StopRequest(Protocol):
    """What tells a stream of jobs to end (running/interrupts.py's `StopSignals`)."""

    requested: bool


def iter_jobs(
    suite: Suite, tests: Iterable[Test], options: PlanOptions, *, stops: StopRequest | None = None
) -> Iterator[Job]:
    """The jobs of `suite`'s `tests` (a list, or tests read as they are taken), one test at a time;
    none after `stops` is requested (checked as each test is taken)."""
    filtered = bool(options.test_ids or options.tags or options.shard)  # else every test is selected
    execution: ExecutionSpec | None = None
    settings: JobSettings | None = None
    for test in tests:
        if stops is not None and stops.requested:
            return
        if filtered and not selected(test, suite, options):
            continue
        if settings is None or test.execution is not execution:  # a suite's tests mostly share one
            execution, settings = test.execution, job_settings(test, suite, options)
        repeat = settings.repeat
        for target in settings.targets:
            yield Job(
                suite=suite,
                test=test,
                target=target,
                attempts=settings.attempts,
                strategy=settings.strategy,
                threshold=settings.threshold,
                timeout_s=settings.timeout_s,
                cost_limit_usd=repeat.cost_limit_usd if repeat else None,
                adaptive=settings.adaptive,
            )


class JobSettings(NamedTuple):
    """What the jobs of a test take from its execution spec, its suite's and the run's options."""

    targets: list[str]  # shared by the tests with these settings: never changed
    repeat: RepeatSpec | None
    attempts: int
    strategy: RepeatStrategy
    adaptive: bool
    timeout_s: float | None
    threshold: float


class JobSettingsMemo:
    """`JobSettings` of a test, worked out again only when its execution spec or suite is not the
    last one's: a suite's tests mostly share one spec object (a dataset's plain tests do)."""

    __slots__ = ("_execution", "_settings", "_suite", "options")

    def __init__(self, options: PlanOptions) -> None:
        self.options = options
        self._execution: ExecutionSpec | None = None  # held: identity is compared, never an id
        self._suite: Suite | None = None
        self._settings: JobSettings | None = None

    def of(self, test: Test, suite: Suite) -> JobSettings:
        settings = self._settings
        if settings is None or test.execution is not self._execution or suite is not self._suite:
            settings = self._settings = job_settings(test, suite, self.options)
            self._execution, self._suite = test.execution, suite
        return settings


def job_settings(test: Test, suite: Suite, options: PlanOptions) -> JobSettings:
    """The `JobSettings` of `test` of `suite` under `options`."""
    repeat = test.execution.repeat or suite.execution.repeat
    attempts = options.repeat or (repeat.count if repeat else 1)
    strategy, adaptive = repeat.strategy if repeat else "pass_at_k", False
    if options.adaptive_repeats:
        strategy, adaptive = adaptive_strategy(repeat.strategy if repeat else None, options)
    timeout = options.timeout_s or test.execution.timeout_seconds or suite.execution.timeout_seconds
    return JobSettings(
        targets=targets_for(test, suite, options.targets),
        repeat=repeat,
        attempts=max(1, attempts),
        strategy=strategy,
        adaptive=adaptive,
        timeout_s=timeout,
        threshold=effective_threshold(options.threshold, test, suite),
    )


def drop_finished(jobs: Iterable[Job], finished: set[tuple[str, str, str]]) -> list[Job]:
    """`--resume`: the jobs whose (suite, test id, target) has no finished row yet."""
    return [job for job in jobs if job.key not in finished]
