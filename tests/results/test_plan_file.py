"""The plan file: written only complete, read back, and rows counted against it in bounded memory."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from agentv_ci.errors import LoadError
from agentv_ci.results.key_sort import external_sorted
from agentv_ci.results.plan_file import (
    PLAN_NAME,
    PlannedJob,
    PlanWriter,
    count_against_plan,
    read_plan,
)
from agentv_ci.running.merging import missing_shards


def test_external_sort_spills_chunks_and_merges_them_in_order() -> None:
    chooser = random.Random(3)
    items = [(chooser.choice("abc"), str(chooser.randint(0, 50)), "t") for _ in range(200)]
    assert list(external_sorted(items, chunk=7)) == sorted(items)
    assert list(external_sorted([], chunk=7)) == []


def _write(directory: Path, jobs: list[tuple[str, str, str]], shard: tuple[int, int] | None = None) -> None:
    writer = PlanWriter(directory, shard=shard, dry_run=False)
    for suite, test_id, target in jobs:
        writer.add(PlannedJob(suite, test_id, target, 3, "e.eval.yaml", 7))
    writer.commit()


def test_a_plan_is_renamed_into_place_complete_and_read_back(tmp_path: Path) -> None:
    _write(tmp_path / "run", [("s", "a", "x"), ("s", "b", "x")], shard=(2, 3))
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == [PLAN_NAME]  # no temporary left
    plan = read_plan(tmp_path / "run")
    assert plan is not None
    assert (plan.shard, plan.listed) == ((2, 3), 2)
    assert [job for job, _line in plan.jobs()] == [
        PlannedJob("s", "a", "x", 3, "e.eval.yaml", 7),
        PlannedJob("s", "b", "x", 3, "e.eval.yaml", 7),
    ]
    assert read_plan(tmp_path) is None  # no plan: results read as before


def test_an_aborted_plan_leaves_nothing_behind(tmp_path: Path) -> None:
    writer = PlanWriter(tmp_path / "new" / "run", shard=None, dry_run=False)
    writer.add(PlannedJob("s", "a", "x"))
    writer.abort()
    assert list(tmp_path.iterdir()) == []  # not even the directories it made


def test_a_cut_plan_is_bad_input(tmp_path: Path) -> None:
    _write(tmp_path, [("s", "a", "x")])
    path = tmp_path / PLAN_NAME
    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:-1]))
    with pytest.raises(LoadError, match="no end record"):
        read_plan(tmp_path)


def test_rows_are_counted_against_the_plan(tmp_path: Path) -> None:
    jobs = [("s", f"t{i}", "x") for i in range(10)] + [("s", "t3", "x")]  # a key twice: one job
    _write(tmp_path, jobs)
    plan = read_plan(tmp_path)
    assert plan is not None
    missing: list[str] = []
    rows = [("s", "t1", "x"), ("s", "t5", "x"), ("s", "t5", "x"), ("other", "t9", "x")]
    count = count_against_plan(plan, rows, lambda job: missing.append(job.test_id))
    assert (count.planned, count.missing, count.not_run) == (10, 8, 8)
    assert missing == ["t0", "t2", "t3", "t4", "t6", "t7", "t8", "t9"]


def test_a_missing_shard_counts_the_jobs_the_present_ones_say_it_has(tmp_path: Path) -> None:
    for index in (1, 3):
        writer = PlanWriter(tmp_path / str(index), shard=(index, 3), dry_run=False)
        for shard in (1, 2, 2, 3, 3, 3):
            writer.add_to_shard(shard)
        writer.add(PlannedJob("s", f"t{index}", "x"))
        writer.commit()
    plans = [read_plan(tmp_path / str(index)) for index in (1, 3)]
    assert missing_shards([p for p in plans if p is not None]) == (2, ["2/3"])


def test_a_secret_in_a_planned_key_is_masked_as_in_the_rows(tmp_path: Path) -> None:
    from agentv_ci.security.redaction import register_secret

    register_secret("sk-plan-secret-123456")
    _write(tmp_path, [("s", "uses-sk-plan-secret-123456", "x")])
    text = (tmp_path / PLAN_NAME).read_text()
    assert "sk-plan-secret-123456" not in text and "uses-***" in text


def test_jobs_added_by_their_fields_are_written_as_their_planned_jobs_are(tmp_path: Path) -> None:
    jobs = [PlannedJob("s", 'a "quoted"\nid', "x", 2, None, None), PlannedJob("s", "é", "y", 1, "e.yaml", 3)]
    fields = [(job.suite, job.test_id, job.target, job.attempts, job.eval_path, job.line) for job in jobs]
    for name in ("struct", "fields", "many"):
        writer = PlanWriter(tmp_path / name, shard=None, dry_run=False)
        if name == "many":
            writer.add_many(fields[:1])
            writer.add_many(fields[1:])
        for job, one in zip(jobs, fields, strict=True):
            if name == "fields":
                writer.add_fields(one)
            elif name == "struct":
                writer.add(job)
        writer.commit()
    plans = [read_plan(tmp_path / name) for name in ("struct", "fields", "many")]
    assert all(plan is not None and plan.listed == 2 for plan in plans)
    lines = [[line for _job, line in plan.jobs()] for plan in plans if plan is not None]
    assert lines[0] == lines[1] == lines[2]
    assert [job for job, _line in plans[2].jobs()] == jobs  # type: ignore[union-attr]
