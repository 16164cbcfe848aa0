"""The common tail of `run` and `report`: apply the gates, write the reports, fill the job summary."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agentv_ci.gating import GateDecision, GateOptions, decide
from agentv_ci.github.step_summary import append_step_summary
from agentv_ci.model.result import RunSummary
from agentv_ci.reporting import write_reports


def gate_and_report(
    summary: RunSummary,
    options: GateOptions,
    *,
    baseline: RunSummary | None,
    junit: Path | None,
    sarif: Path | None,
    markdown: Path | None,
    repo_root: Path,
    sarif_category: str | None = None,
    reports: Sequence[tuple[str, Path]] = (),
) -> GateDecision:
    """Decide the gates for `summary` (against `baseline`), write every requested report (`reports`:
    reporter plugins by name, e.g. ("html", path)) and append
    the Markdown summary to `$GITHUB_STEP_SUMMARY`; return the decision for the caller to print/exit on."""
    decision = decide(summary, options, baseline)
    write_reports(
        summary,
        junit=junit,
        sarif=sarif,
        markdown=markdown,
        repo_root=repo_root,
        baseline=baseline,
        decision=decision,
        sarif_category=sarif_category,
        reports=reports,
    )
    append_step_summary(summary, decision, baseline=baseline, repo_root=repo_root)
    return decision
