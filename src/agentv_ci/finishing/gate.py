"""The post-run service's gate stage: the gate options for a compared run, and its decision."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from agentv_ci.errors import ExitCode
from agentv_ci.finishing.baseline import ComparedBaseline
from agentv_ci.gating import GateDecision, GateOptions, check_gate_flags, decide
from agentv_ci.history.flakiness import FlakinessReport
from agentv_ci.history.flaky_waivers import BASE_BRANCH, with_flaky_waivers
from agentv_ci.model.result import RunSummary

__all__ = ["GatePolicy", "gate", "history_gates", "interrupted_verdict"]

# The gate options once the baseline is known: the Action drops `max_regression` when `baseline:
# auto` found none, `report` refuses it without one, and `--history` waives the flaky tests.
GatePolicy = Callable[[RunSummary, ComparedBaseline], GateOptions]


def history_gates(
    options: GateOptions, flakiness: FlakinessReport | None, *, regression_needs_baseline: bool = False
) -> GatePolicy:
    """The command line's gates: `options`, with the flaky waivers `--history` measured on the base
    branch added to its waivers; `regression_needs_baseline`: `--max-regression` without a baseline
    is bad input (exit 2)."""

    def policy(summary: RunSummary, baseline: ComparedBaseline) -> GateOptions:
        if regression_needs_baseline:
            check_gate_flags(options.max_regression, baseline.summary is not None)
        if flakiness is None:
            return options
        waivers = with_flaky_waivers(options.waivers, flakiness, summary.results, BASE_BRANCH)
        return replace(options, waivers=waivers)

    return policy


def interrupted_verdict(decision: GateDecision, stopped: str) -> GateDecision:
    """`decision`, never a pass: an interrupted step whose results look complete (the signal came
    after the last test, or while the baseline ran) is inconclusive, not green."""
    if decision.exit_code != ExitCode.OK:
        return decision
    reason = f"interrupted: {stopped} did not finish"
    return replace(
        decision, passed=False, exit_code=ExitCode.INCONCLUSIVE, reasons=[*decision.reasons, reason]
    )


def gate(
    summary: RunSummary, options: GateOptions, baseline: ComparedBaseline, *, interrupted: str | None
) -> GateDecision:
    """The gates' decision on `summary`; `interrupted` (what a signal cut short) makes it never a pass."""
    decision = decide(summary, options, baseline.summary)
    return decision if interrupted is None else interrupted_verdict(decision, interrupted)
