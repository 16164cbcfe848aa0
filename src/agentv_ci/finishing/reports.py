"""The post-run service's report stage: where a run's reports go, and writing them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agentv_ci.gating import GateDecision
from agentv_ci.model.result import RunSummary
from agentv_ci.reporting import write_reports

__all__ = ["ReportDestinations", "write_run_reports"]


@dataclass(frozen=True)
class ReportDestinations:
    """The files to write (None: not asked for); `plugins`: (reporter plugin name, path) pairs such as
    ("html", path); `sarif_category`: the SARIF run's `automationDetails.id`."""

    junit: Path | None = None
    sarif: Path | None = None
    markdown: Path | None = None
    plugins: tuple[tuple[str, Path], ...] = ()
    sarif_category: str | None = None


def write_run_reports(
    summary: RunSummary,
    destinations: ReportDestinations,
    *,
    repo_root: Path,
    baseline: RunSummary | None = None,
    decision: GateDecision | None = None,
) -> None:
    """Every report `destinations` names; a failing reporter plugin is named on stderr and the others
    are still written (reporting.write_reports)."""
    write_reports(
        summary,
        junit=destinations.junit,
        sarif=destinations.sarif,
        markdown=destinations.markdown,
        repo_root=repo_root,
        baseline=baseline,
        decision=decision,
        sarif_category=destinations.sarif_category,
        reports=destinations.plugins,
    )
