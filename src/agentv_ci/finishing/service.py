"""The post-run service: one run's results to its decision, reports, step summary and console verdict."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from agentv_ci.errors import ExitCode
from agentv_ci.finishing.baseline import BaselineResolver, ComparedBaseline, compare
from agentv_ci.finishing.gate import GatePolicy, gate
from agentv_ci.finishing.reports import ReportDestinations, write_run_reports
from agentv_ci.gating import GateDecision
from agentv_ci.model.result import RunSummary
from agentv_ci.reporting.console import render_console

__all__ = ["Finished", "PostRun", "PostRunRequest", "StepSummary"]


class StepSummary(Protocol):
    """The CI job's summary page (github/step_summary.py's `append_step_summary`); never changes the
    verdict."""

    def __call__(
        self,
        summary: RunSummary,
        decision: GateDecision,
        *,
        baseline: RunSummary | None,
        repo_root: Path | None,
    ) -> object: ...


@dataclass(frozen=True)
class PostRunRequest:
    """One finished run to gate and report.

    `run_dir`: the run directory whose summary.json records the baseline compared (None: `report`
    leaves the results it reads as they are). `interrupted`: what a signal cut short (the Action's
    step), which makes the verdict never a pass. `warnings`: the run's own, printed just before the
    verdict."""

    summary: RunSummary
    baseline: BaselineResolver
    gates: GatePolicy
    reports: ReportDestinations
    repo_root: Path
    run_dir: Path | None = None
    interrupted: str | None = None
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Finished:
    """The run's summary as reported (naming its baseline), the baseline, and the decision."""

    summary: RunSummary
    baseline: ComparedBaseline
    decision: GateDecision

    @property
    def exit_code(self) -> ExitCode:
        return self.decision.exit_code


class PostRun:
    """baseline -> gate -> reports -> console. `echo` prints the verdict, `warn` the run's warnings,
    `step_summary` (None: there is no summary page) appends the Markdown summary to the job's page."""

    def __init__(
        self, *, echo: Callable[[str], None], warn: Callable[[str], None], step_summary: StepSummary | None
    ) -> None:
        self._echo = echo
        self._warn = warn
        self._step_summary = step_summary

    def compare(self, request: PostRunRequest) -> tuple[RunSummary, ComparedBaseline]:
        """The baseline stage alone: `request`'s summary naming the baseline it is compared with."""
        baseline = request.baseline(request.summary)
        return compare(request.summary, baseline, request.run_dir), baseline

    def finish(self, request: PostRunRequest) -> Finished:
        """Every stage, in order; the caller exits with `Finished.exit_code` (or its own override)."""
        summary, baseline = self.compare(request)
        options = request.gates(summary, baseline)
        decision = gate(summary, options, baseline, interrupted=request.interrupted)
        self.report(summary, decision, baseline, request)
        self.tell(summary, decision, request.warnings)
        return Finished(summary, baseline, decision)

    def report(
        self, summary: RunSummary, decision: GateDecision, baseline: ComparedBaseline, request: PostRunRequest
    ) -> None:
        """The report files, then the job's step summary (the same body as the Markdown report)."""
        write_run_reports(
            summary,
            request.reports,
            repo_root=request.repo_root,
            baseline=baseline.summary,
            decision=decision,
        )
        if self._step_summary is not None:
            self._step_summary(summary, decision, baseline=baseline.summary, repo_root=request.repo_root)

    def tell(self, summary: RunSummary, decision: GateDecision, warnings: tuple[str, ...]) -> None:
        """The run's warnings, then the console verdict."""
        for warning in warnings:
            self._warn(f"warning: {warning}")
        self._echo(render_console(summary, decision))
