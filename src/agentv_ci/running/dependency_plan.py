"""Before a run: the suites whose tests declare `depends_on` (they run in waves, running/waves.py),
checked so that every planned test's dependencies run in the same run and on the same target, or
finished in the run being resumed.

A test whose dependency the run leaves out (`--test-id` or `--tag`, another `--shard`, or a test
`targets:` list without the dependent's target) stops the run before anything runs (exit 2): AgentV
4.42.4 refuses a `--test-id` filter that leaves out a dependency too ("depends on 'a', but no test
with that ID exists in this suite"), and a dependent never runs without its dependency's result."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Protocol

from agentv_ci.errors import UsageError
from agentv_ci.model.suite import Suite, Test
from agentv_ci.running.plan import Job, PlanOptions, iter_jobs, selected
from agentv_ci.running.sharding import shard_of
from agentv_ci.running.waves import Key, Ordering

__all__ = ["SuiteSource", "order_suites"]


class SuiteSource(Protocol):
    """A loaded suite whose tests can be read (again): running.selected_suites.LoadedSuite."""

    @property
    def suite(self) -> Suite: ...

    def tests(self) -> Iterable[Test]: ...


def order_suites(
    suites: Iterable[tuple[Suite, Iterable[Test]]],
    plan: PlanOptions,
    finished: set[Key],
) -> Ordering:
    """The `Ordering` of a run over `suites` (those with `depends_on`, with their tests); a
    `UsageError` names the first planned test whose dependency the run leaves out."""
    paths: set[str] = set()
    names: set[str] = set()
    for suite, tests in suites:
        paths.add(suite.path)
        held = list(tests)
        jobs = list(iter_jobs(suite, held, plan))
        planned = {job.key for job in jobs} | finished
        for job in jobs:
            names.add(job.key[0])
            if job.key in finished:
                continue
            for dep in job.test.depends_on:
                if (job.key[0], dep, job.target) not in planned:
                    _refuse(job, dep, held, plan)
    return Ordering(frozenset(paths), frozenset(names))


def _refuse(job: Job, dep: str, tests: list[Test], plan: PlanOptions) -> None:
    test = next((t for t in tests if t.id == dep), None)
    if test is not None and not selected(test, job.suite, replace(plan, shard=None)):
        why = "the --test-id / --tag selection leaves it out"
        hint = f"select it too (e.g. --test-id {dep}); AgentV refuses such a filter as well"
    elif test is not None and plan.shard is not None:
        index, count = plan.shard
        why = f"it falls in shard {shard_of(job.key[0], dep, count)}/{count}, not {index}/{count}"
        hint = "run this suite unsharded (tests that depend on each other cannot be split across shards)"
    else:
        why = f"it does not run on target {job.target!r}"
        hint = "give the dependency the dependent's targets (`execution.targets`)"
    raise UsageError(
        f"test {job.test.id!r} depends on {dep!r}, which this run does not run: {why}",
        location=job.test.location,
        hint=hint,
    )
