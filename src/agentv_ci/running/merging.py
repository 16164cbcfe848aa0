"""Join shard result dirs (`agentv-ci merge`) into one `index.jsonl` + `summary.json`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import msgspec

from agentv_ci.errors import UsageError
from agentv_ci.model.estimate import merged_estimates
from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.results.plan_file import PLAN_NAME, Plan, PlanWriter, read_plan
from agentv_ci.text_safety import printable


@dataclass
class MergeOutcome:
    rows: int
    duplicates: int
    summary: RunSummary


def merge_runs(inputs: list[Path], output_dir: Path) -> MergeOutcome:
    """Read every input (run dir or results file), keep one row per suite + test id + target (a later
    input's row wins, except that a `not_run` row never replaces a finished one), and write
    `output_dir/index.jsonl` and `summary.json`. Run facts: earliest start, latest end, any dry-run
    or budget stop carried over.

    The rows are counted against the inputs' plans (`plan.jsonl`): a planned job without a row is
    `not_run`, and so is every job of a shard none of the inputs is (shard 2/3 of a run whose shards
    1/3 and 3/3 are merged); the merged directory gets a plan of them all.

    Shards whose change-based selection chose nothing (their plan says `nothing_selected`) add no
    job: with real shards the merge is judged on those; when every input is one, the merged run is
    `skipped` too, unless a shard left no record at all (then it is incomplete: unknown)."""
    # lazy: `results.plan_check`, the results store (msgspec) loaded only when `merge_runs` runs
    from agentv_ci.results.plan_check import apply_plan
    from agentv_ci.results.results_file import (
        ResultsWriter,
        load_run,
        summary_from_results,
        write_summary_json,
    )

    if not inputs:
        raise UsageError("merge needs at least one input")
    rows: dict[tuple[str, str, str], TestResult] = {}
    duplicates = 0
    runs: list[RunSummary] = []
    plans: list[Plan] = []
    for path in inputs:
        run = load_run(path)
        runs.append(run)
        plan = read_plan(path if path.is_dir() else path.parent)
        if plan is not None:
            plans.append(plan)
        for result in run.results:
            key = (result.suite, result.test_id, result.target)
            earlier = rows.get(key)
            if earlier is not None:
                _check_same_test(earlier, result)
                duplicates += 1
                if result.execution_status == "not_run" and earlier.execution_status != "not_run":
                    continue  # a finished row is never replaced by a "not run" one
            rows[key] = result
    index = output_dir / "index.jsonl"
    if index.exists():
        index.unlink()
    with ResultsWriter(index) as writer:
        for result in rows.values():
            writer.append(result)
    (output_dir / PLAN_NAME).unlink(missing_ok=True)
    nothing = bool(plans) and len(plans) == len(inputs) and all(p.end.nothing_selected for p in plans)
    if plans:
        _write_merged_plan(output_dir, plans, nothing_selected=nothing)
    starts = [r.started_at for r in runs if r.started_at]
    ends = [r.ended_at for r in runs if r.ended_at]
    summary = summary_from_results(
        rows.values(),
        started_at=min(starts) if starts else None,
        ended_at=max(ends) if ends else None,
        duration_ms=sum(r.duration_ms or 0.0 for r in runs),
        dry_run=any(r.dry_run for r in runs),
        # Only while some row is still "not run": a rerun shard that finished them clears it.
        budget_exhausted=any(r.budget_exhausted for r in runs)
        and any(row.execution_status == "not_run" for row in rows.values()),
        selection={k: v for r in runs for k, v in r.selection.items()},
        unselecting=sorted({path for r in runs for path in r.unselecting}),
        interrupted=any(r.interrupted for r in runs),  # a partial shard makes a partial whole
        skipped=next((r.skipped for r in runs if r.skipped), None) if nothing else None,
    )
    summary = apply_plan(summary, output_dir, has_summary=True)
    if any(run.plan_unknown for run in runs):  # rows of those inputs were not counted against a plan
        summary = msgspec.structs.replace(summary, plan_unknown=True)
    uses = [run.cache for run in runs if run.cache is not None]
    if uses:  # the shards' response cache use, added up
        total = uses[0]
        for use in uses[1:]:
            total = total.merged(use)
        summary = msgspec.structs.replace(summary, cache=total)
    summary = _with_costs(summary, runs)
    write_summary_json(output_dir / "summary.json", summary)
    return MergeOutcome(rows=len(rows), duplicates=duplicates, summary=summary)


def _check_same_test(earlier: TestResult, later: TestResult) -> None:
    """Rows of one key from two eval files are two tests, not two runs of one (each file was run
    alone, so no run saw both names: E116): merging would keep one and drop the other's verdict."""
    if earlier.eval_path is None or later.eval_path is None or earlier.eval_path == later.eval_path:
        return  # shards or reruns of one eval file (or rows that do not say where they came from)
    key = f"{earlier.suite}/{earlier.test_id} [{earlier.target}]"
    raise UsageError(
        f"merge: {printable(key)} comes from two eval files, {printable(earlier.eval_path)} and "
        f"{printable(later.eval_path)}: their results share one key (suite, test id, target)",
        hint="give each eval file its own suite name (`name:`; E116 in docs/diagnostics.md) and run "
        "them again",
    )


def _with_costs(summary: RunSummary, runs: list[RunSummary]) -> RunSummary:
    """The shards' estimates and spend added up; the spend only when every shard recorded its own
    (else the rows' costs stand for it, as for results without a summary.json)."""

    estimate = merged_estimates([run.estimate for run in runs if run.estimate is not None])
    spends = [run.spent_usd for run in runs]
    spent = round(sum(s for s in spends if s is not None), 6) if None not in spends else None
    unpriced = sum(run.unpriced for run in runs)
    return msgspec.structs.replace(summary, estimate=estimate, spent_usd=spent, unpriced=unpriced)


def missing_shards(plans: list[Plan]) -> tuple[int, list[str]]:
    """(jobs, names) of the shards whose jobs no plan among `plans` lists, plus what merged plans
    among them already counted missing.

    A shard that planned tests says how many jobs each shard of its selection has: a shard with jobs
    is missing unless a plan of it that planned tests is present (a record that says it selected
    nothing does not cover them). When every plan of a shard count selected nothing, none can say:
    a shard without any record is then missing, its jobs unknown (named, none counted)."""
    jobs = sum(plan.end.missing for plan in plans)
    names = [name for plan in plans for name in plan.end.missing_shards]
    by_count: dict[int, list[Plan]] = {}
    for plan in plans:
        if plan.shard is not None:
            by_count.setdefault(plan.shard[1], []).append(plan)
    for count, group in sorted(by_count.items()):
        sizes = next((plan.end.shard_jobs for plan in group if len(plan.end.shard_jobs) == count), [])
        known = bool(sizes)
        covered = {
            plan.shard[0] for plan in group if plan.shard and not (known and plan.end.nothing_selected)
        }
        for index in range(1, count + 1):
            if index in covered or (known and sizes[index - 1] == 0):
                continue
            jobs += sizes[index - 1] if known else 0
            names.append(f"{index}/{count}")
    return jobs, names


def _write_merged_plan(output_dir: Path, plans: list[Plan], *, nothing_selected: bool) -> None:
    """The inputs' planned jobs in one plan, with the jobs of missing shards counted at its end
    (`nothing_selected`: every input selected nothing)."""
    writer = PlanWriter(output_dir, shard=None, dry_run=any(plan.dry_run for plan in plans))
    try:
        for plan in plans:
            for job, _line in plan.jobs():
                writer.add(job)
        jobs, names = missing_shards(plans)
        writer.commit(missing=jobs, missing_shards=names, nothing_selected=nothing_selected)
    finally:
        writer.abort()
