from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from msgspec.structs import replace

from agentv_ci.errors import UsageError
from agentv_ci.model.suite import ExecutionSpec, RepeatSpec
from agentv_ci.model.suite import Test as SuiteTest
from agentv_ci.running.interrupts import StopSignals
from agentv_ci.running.plan import PlanOptions, drop_finished, iter_jobs, plan_jobs, targets_for
from agentv_ci.running.sharding import parse_shard, shard_of
from tests.running.support import make_suite


def test_shards_partition_the_tests_stably(tmp_path: Path) -> None:
    suites = [make_suite(tmp_path, "a", 40), make_suite(tmp_path, "b", 40)]
    shards = [{job.key for job in plan_jobs(suites, PlanOptions(shard=(i, 3)))} for i in (1, 2, 3)]
    everything = {job.key for job in plan_jobs(suites, PlanOptions())}
    assert set().union(*shards) == everything
    assert sum(len(s) for s in shards) == len(everything)  # disjoint
    assert all(len(s) > 10 for s in shards)  # roughly balanced
    assert shard_of("a", "a-1", 3) == shard_of("a", "a-1", 3)
    # the split does not depend on which other tests exist
    alone = plan_jobs([make_suite(tmp_path, "a", 40)], PlanOptions(shard=(2, 3)))
    assert {j.key for j in alone} == {k for k in shards[1] if k[0] == "a"}


def test_parse_shard_errors() -> None:
    assert parse_shard("2/5") == (2, 5)
    for bad in ("0/3", "4/3", "x", "1/0"):
        with pytest.raises(UsageError):
            parse_shard(bad)


def test_filters_by_id_glob_and_tags(tmp_path: Path) -> None:
    suite = make_suite(tmp_path, "f", 12)
    suite.tests[3].tags.append("smoke")
    suite.tests[4].tags.extend(["smoke", "slow"])
    ids = [j.test.id for j in plan_jobs([suite], PlanOptions(test_ids=("f-1*", "f-3")))]
    assert ids == ["f-1", "f-3", "f-10", "f-11"]
    assert [j.test.id for j in plan_jobs([suite], PlanOptions(tags=("smoke",)))] == ["f-3", "f-4"]
    assert [j.test.id for j in plan_jobs([suite], PlanOptions(tags=("smoke", "slow")))] == ["f-4"]


def test_target_precedence_and_resume(tmp_path: Path) -> None:
    suite = make_suite(tmp_path, "p", 2)
    test = suite.tests[0]
    assert targets_for(test, suite, ()) == ["t"]
    test.execution.targets = ["x", "y"]
    assert targets_for(test, suite, ()) == ["x", "y"]
    assert targets_for(test, suite, ("cli",)) == ["cli"]
    jobs = plan_jobs([suite], PlanOptions())
    assert [j.key for j in drop_finished(jobs, {("p", "p-0", "x")})] == [("p", "p-0", "y"), ("p", "p-1", "t")]


def test_each_test_gets_its_own_execution_settings_when_they_change_between_tests(tmp_path: Path) -> None:
    suite = make_suite(tmp_path, "m", 5)
    shared = ExecutionSpec(targets=["a", "b"], threshold=0.5)
    own = ExecutionSpec(target="c", timeout_seconds=9.0, repeat=RepeatSpec(count=3, strategy="mean"))
    executions = [shared, shared, own, shared, ExecutionSpec()]
    suite.tests = [replace(t, execution=e) for t, e in zip(suite.tests, executions, strict=True)]
    jobs = [
        (j.test.id, j.target, j.threshold, j.timeout_s, j.attempts, j.strategy)
        for j in plan_jobs([suite], PlanOptions())
    ]
    a, b, c = (("m-0", "m-1", "m-3"), ("a", "b"), ("m-2", "c", 0.8, 9.0, 3, "mean"))
    assert jobs == [
        *[(i, t, 0.5, None, 1, "pass_at_k") for i in a[:2] for t in b],
        c,
        *[(a[2], t, 0.5, None, 1, "pass_at_k") for t in b],
        ("m-4", "t", 0.8, None, 1, "pass_at_k"),  # the suite's target
    ]


def test_jobs_end_once_a_stop_is_requested_without_taking_another_test(tmp_path: Path) -> None:
    suite = make_suite(tmp_path, "s", 6)
    taken: list[str] = []

    def tests() -> Iterator[SuiteTest]:
        for test in suite.tests:
            taken.append(test.id)
            yield test

    stops = StopSignals()
    jobs = []
    for job in iter_jobs(suite, tests(), PlanOptions(), stops=stops):
        jobs.append(job.test.id)
        if len(jobs) == 2:
            stops.requested = True  # as SIGINT sets it
    assert jobs == ["s-0", "s-1"]
    assert taken == ["s-0", "s-1", "s-2"]  # the one taken when the stop is seen is not run
