"""The Action's inputs as the run request and the gate options `run` would build from flags."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from agentv_ci.action.baseline import Baseline
from agentv_ci.action.log import ActionLog
from agentv_ci.action.selecting import PrSelection, targets_file_of
from agentv_ci.errors import AgentvCiError, UsageError
from agentv_ci.gating import GateOptions, check_gate_flags
from agentv_ci.github.inputs import ActionInputs
from agentv_ci.model.bounds import MAX_ATTEMPTS
from agentv_ci.model.estimate_text import estimate_table
from agentv_ci.results.results_file import load_run
from agentv_ci.running.adaptive import baseline_counts
from agentv_ci.running.plan import PlanOptions
from agentv_ci.running.recorded_usage import RecordedUsage
from agentv_ci.running.session import RunRequest
from agentv_ci.running.sharding import parse_shard
from agentv_ci.text_safety import neutralise_workflow_commands, printable

if TYPE_CHECKING:
    from agentv_ci.model.estimate import CostEstimate
    from agentv_ci.running.recorded_usage import RecordedUsage


def run_request(
    inputs: ActionInputs,
    selected: PrSelection,
    *,
    workspace: Path,
    output_dir: Path,
    log: ActionLog | None = None,
    secrets_withheld: bool = False,
) -> RunRequest:
    """The run of the selected evals into `output_dir` (relative input paths inside `workspace`); the
    cost estimate goes to `log` before anything runs. `secrets_withheld` (a fork's pull request): tests
    needing a missing API key are not run instead of refusing the run."""

    def inside(text: str) -> Path:
        return Path(text) if Path(text).is_absolute() else workspace / text

    return RunRequest(
        paths=selected.paths,
        output_dir=output_dir,
        plan=PlanOptions(
            targets=tuple(inputs.target),
            shard=parse_shard(inputs.shard) if inputs.shard else None,
            repeat=inputs.repeat,
            threshold=inputs.threshold,
            adaptive_repeats=_adaptive_repeats(inputs),
        ),
        targets_file=targets_file_of(inputs, workspace),
        workers=inputs.workers,
        dry_run=inputs.dry_run,
        budget_usd=inputs.budget_usd,
        on_estimate=(lambda estimate: log.echo("\n".join(_estimate_lines(inputs, estimate))))
        if log
        else None,
        recorded_usage=_recorded_usage(inputs, workspace),
        selection=selected.reasons,
        unselecting=tuple(selected.unselecting),
        allow_outside=tuple(inside(p) for p in inputs.allow_outside_repo),
        cache_watch=tuple(inputs.select_all_on),  # what selects every eval keys every cached answer
        baseline_counts=_baseline_counts(inputs, workspace) if inputs.adaptive_repeats else {},
        secrets_withheld=secrets_withheld,
    )


def _estimate_lines(inputs: ActionInputs, estimate: CostEstimate) -> list[str]:
    """The run's estimate table; with `baseline_ref`, a line saying the re-run comes on the same bill
    (its own estimate is printed when it starts: action/rerun_bill.py)."""

    lines = estimate_table(estimate)
    if inputs.baseline_ref:
        ref = neutralise_workflow_commands(printable(inputs.baseline_ref))
        lines.append(
            f"  + the baseline re-run at {ref}: estimated when it starts, after this run; its spend "
            "counts against the same budget"
        )
    return lines


def _adaptive_repeats(inputs: ActionInputs) -> int | None:

    if inputs.adaptive_repeats is not None and inputs.adaptive_repeats > MAX_ATTEMPTS:
        raise UsageError(
            f"input `adaptive_repeats` must be from 1 to {MAX_ATTEMPTS}, got {inputs.adaptive_repeats}"
        )
    return inputs.adaptive_repeats


def _baseline_counts(inputs: ActionInputs, workspace: Path) -> dict[tuple[str, str, str], tuple[int, int]]:
    """`adaptive_repeats` against `baseline: PATH`: its pass counts (`auto`'s artifact is fetched
    after the run, so its comparisons are not looked at while running)."""
    if not inputs.baseline or inputs.baseline == "auto":
        return {}

    path = Path(inputs.baseline) if Path(inputs.baseline).is_absolute() else workspace / inputs.baseline
    try:
        return baseline_counts(load_run(path).results)
    except AgentvCiError:  # reported by the baseline step after the run
        return {}


def _recorded_usage(inputs: ActionInputs, workspace: Path) -> RecordedUsage | None:
    """The output tokens a `baseline: PATH` recorded, for the cost estimate (a baseline that cannot
    be read here is reported by the baseline step after the run)."""
    if not inputs.baseline or inputs.baseline == "auto":
        return None

    path = Path(inputs.baseline) if Path(inputs.baseline).is_absolute() else workspace / inputs.baseline
    try:
        return RecordedUsage.of(load_run(path).results)
    except AgentvCiError:
        return None


def gate_options(inputs: ActionInputs, *, has_baseline: bool) -> GateOptions:
    """The gates the inputs ask for; `max_regression` without a baseline is bad input."""
    check_gate_flags(inputs.max_regression, has_baseline)
    return GateOptions(
        threshold=inputs.threshold,
        min_pass_rate=inputs.min_pass_rate,
        min_mean_score=inputs.min_mean_score,
        max_regression=inputs.max_regression,
        fail_on_error=inputs.fail_on_error,
        max_cost_usd=inputs.max_cost_usd,
    )


def gate_options_for(inputs: ActionInputs, baseline: Baseline, log: ActionLog) -> GateOptions:
    """The gates against `baseline`: `max_regression` is dropped, with a warning, when `baseline: auto`
    found none."""
    if inputs.max_regression is not None and baseline.summary is None and inputs.baseline == "auto":
        log.warning("max_regression is not applied: `baseline: auto` found no baseline")
        return replace(gate_options(inputs, has_baseline=True), max_regression=None)
    return gate_options(inputs, has_baseline=baseline.summary is not None or bool(inputs.baseline_ref))
