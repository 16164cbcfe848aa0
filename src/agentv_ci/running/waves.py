"""`depends_on`: the tests of a suite that declares dependencies run in AgentV's dependency waves.

As AgentV 4.42.4 (orchestrator.ts: computeWaves, checkDependencies), per eval file and target: wave 0
holds the tests without dependencies, wave k the tests whose last dependency is in wave k-1, and a
wave starts once every test of the previous wave has finished. Only an execution error (or a test
that did not run) is a failed dependency; a low score is not. A test with a failed dependency gets,
by its `on_dependency_failure`: `skip` (the default) an execution error "Skipped: dependency failed
(a)", `fail` the same with "Failed: ...", `run` runs. The graders of a test with dependencies get
each dependency's result (`DependencyResult`, AgentV's `dependencyResults`).

Suites without `depends_on` are not touched: their jobs are handed on as the iterator yields them (a
JSONL dataset stays streamed). A suite with dependencies has its jobs held while it runs.
"""

from __future__ import annotations

import asyncio
import enum
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from agentv_ci.model.result import DependencyResult, DependencyStatus, TestResult
from agentv_ci.running.plan import Job
from agentv_ci.running.rows import unfinished_result

__all__ = ["WAIT", "Dependencies", "JobSource", "Ordering", "Wait", "dependency_result"]

Key = tuple[str, str, str]  # (suite, test id, target)
Dependencies = dict[str, DependencyResult]
Taken = tuple[Job, Dependencies | None]


class Wait(enum.Enum):
    """`JobSource.take_now` has no job at hand: `take()` one."""

    WAIT = enum.auto()


WAIT = Wait.WAIT


@dataclass(frozen=True)
class Ordering:
    """Which suites (eval paths; `names`: as rows name them) declare `depends_on`, and the rows of
    theirs a resumed run already has (a dependency that finished before is not run again: its row is
    its result)."""

    suites: frozenset[str] = frozenset()
    names: frozenset[str] = frozenset()
    earlier: dict[Key, TestResult] = field(default_factory=dict)

    def keep(self, rows: Iterable[TestResult]) -> Ordering:
        """Keep the rows (of the run being resumed) of these suites; returns self."""
        if self.names:
            self.earlier.update(((r.suite, r.test_id, r.target), r) for r in rows if r.suite in self.names)
        return self


def _failed(result: TestResult) -> bool:
    return result.execution_status in ("execution_error", "not_run")


def dependency_result(result: TestResult) -> DependencyResult:
    """AgentV's `toDependencyResult`: score, output, grader details and status."""
    details = {s.name: {"score": s.score, "verdict": s.verdict} for s in result.scores}
    status: DependencyStatus = (
        "passed" if result.execution_status == "ok" else "error" if _failed(result) else "failed"
    )
    # AgentV's row for a test whose agent failed answers "Error occurred: <message>"
    output = result.output if result.output is not None else f"Error occurred: {result.error or ''}"
    return DependencyResult(score=result.score, output=output, details=details or None, status=status)


@dataclass
class _Group:
    """The jobs of one suite against one target, in waves."""

    waves: list[list[Job]]
    results: dict[str, TestResult]
    next_wave: int = 0
    running: int = 0

    @property
    def finished(self) -> bool:
        return self.next_wave >= len(self.waves) and self.running == 0


def _waves(jobs: list[Job]) -> list[list[Job]]:
    """Kahn's algorithm by levels, in file order within a wave; dependencies outside `jobs` (finished
    in an earlier run) count as met."""
    ids = {job.test.id for job in jobs}
    waiting = {job.test.id: sum(1 for d in set(job.test.depends_on) if d in ids) for job in jobs}
    dependents: dict[str, list[Job]] = {}
    for job in jobs:
        for dep in set(job.test.depends_on):
            if dep in ids:
                dependents.setdefault(dep, []).append(job)
    waves: list[list[Job]] = []
    ready = [job for job in jobs if waiting[job.test.id] == 0]
    while ready:
        waves.append(ready)
        following: list[Job] = []
        for job in ready:
            for dependent in dependents.get(job.test.id, []):
                waiting[dependent.test.id] -= 1
                if waiting[dependent.test.id] == 0:
                    following.append(dependent)
        order = {id(job): index for index, job in enumerate(jobs)}
        ready = sorted(following, key=lambda j: order[id(j)])
    if sum(len(wave) for wave in waves) != len(jobs):  # `validate` reports cycles (E103) first
        raise RuntimeError("depends_on: tests in a dependency cycle were planned")
    return waves


class JobSource:
    """Hands the workers their jobs: `take()` the next one (None: nothing left), `done()` with its
    result. A job of a later wave is handed out once its wave may start; a skipped or failed one never
    is: its row goes to `emit` at once."""

    def __init__(
        self,
        jobs: Iterable[Job],
        ordering: Ordering,
        *,
        emit: Callable[[TestResult], None],
        fingerprint: Callable[[Job], str],
        dry_run: bool,
    ) -> None:
        self._jobs = iter(jobs)
        self._ordering = ordering
        self._emit = emit
        self._fingerprint = fingerprint
        self._dry_run = dry_run
        self._ahead: Job | None = None  # the first job of the suite after a held one
        self._ready: deque[Taken] = deque()
        self._groups: dict[tuple[str, str], _Group] = {}
        self._wake: asyncio.Event | None = None
        self._stopped = False

    def take_now(self) -> Taken | Wait | None:
        """The next job when it is at hand (a suite without dependencies), without a coroutine; else
        `WAIT`: `take()` it (a wave to wait for, the first job of a held suite, the end of the jobs)."""
        if self._stopped or self._ready or self._ahead is not None:
            return WAIT
        job = next(self._jobs, None)
        if job is None or job.suite.path in self._ordering.suites:
            self._ahead = job  # for take()
            return WAIT
        return job, None

    async def take(self) -> Taken | None:
        while not self._stopped:
            if self._ready:
                return self._ready.popleft()
            job = self._next()
            if job is None:
                if all(group.finished for group in self._groups.values()):
                    return None
                if self._wake is None:
                    self._wake = asyncio.Event()
                await self._wake.wait()  # until a wave ends (or the run stops)
            elif job.suite.path in self._ordering.suites:
                self._hold(job)
            else:
                return job, None
        return None

    def done(self, job: Job, result: TestResult) -> None:
        group = self._groups.get((job.suite.path, job.target))
        if group is None:
            return
        group.results[job.test.id] = result
        group.running -= 1
        self._advance(group)

    def stop(self) -> None:
        """No job is handed out any more (the run stops); waiting workers return."""
        self._stopped = True
        self._signal()

    def remaining(self) -> Iterator[Job]:
        """Every job not handed out (after `stop()`): for their `not_run` rows."""
        yield from (job for job, _ in self._ready)
        self._ready.clear()
        for group in self._groups.values():
            for wave in group.waves[group.next_wave :]:
                yield from wave
            group.next_wave = len(group.waves)
        if self._ahead is not None:
            job, self._ahead = self._ahead, None
            yield job
        yield from self._jobs

    def _next(self) -> Job | None:
        if self._ahead is not None:
            job, self._ahead = self._ahead, None
            return job
        return next(self._jobs, None)

    def _signal(self) -> None:
        if self._wake is not None:
            self._wake.set()
            self._wake = None

    def _hold(self, first: Job) -> None:
        """Take every job of `first`'s suite (they come together) and start each target's wave 0."""
        by_target: dict[str, list[Job]] = {}
        job: Job | None = first
        while job is not None and job.suite is first.suite:
            by_target.setdefault(job.target, []).append(job)
            job = next(self._jobs, None)
        self._ahead = job
        earlier = self._ordering.earlier
        for target, jobs in by_target.items():
            results: dict[str, TestResult] = {}
            for planned in jobs:
                for dep in planned.test.depends_on:
                    row = earlier.get((planned.key[0], dep, target))
                    if row is not None:
                        results[dep] = row
            group = self._groups[(first.suite.path, target)] = _Group(_waves(jobs), results)
            self._advance(group)

    def _advance(self, group: _Group) -> None:
        """Start the next waves while the current one has nothing running."""
        while group.running == 0 and group.next_wave < len(group.waves):
            wave = group.waves[group.next_wave]
            group.next_wave += 1
            for job in wave:
                self._start(group, job)
        self._signal()

    def _start(self, group: _Group, job: Job) -> None:
        results = {dep: group.results[dep] for dep in job.test.depends_on if dep in group.results}
        failed = [dep for dep, row in results.items() if _failed(row)]
        missing = [dep for dep in job.test.depends_on if dep not in results]
        policy = job.test.on_dependency_failure or "skip"
        if (failed or missing) and policy != "run":
            # AgentV names only the dependencies that ended in an execution error
            prefix = "Skipped" if policy == "skip" else "Failed"
            message = f"{prefix}: dependency failed ({', '.join(failed)})"
            row = unfinished_result(
                job,
                status="execution_error",
                error=message,
                stage="setup",
                reason="dependency_failed",
                dry_run=self._dry_run,
                fingerprint=self._fingerprint(job),
                output=message,
                instant=True,
            )
            group.results[job.test.id] = row
            self._emit(row)
            return
        group.running += 1
        dependencies = {dep: dependency_result(row) for dep, row in results.items()}
        self._ready.append((job, dependencies or None))
