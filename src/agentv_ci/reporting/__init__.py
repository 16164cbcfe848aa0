"""Reporters (JUnit, SARIF, Markdown, JSONL, console) and the results file.

Reporters are plugins in the `agentv_ci.reporters` namespace; `write_reports` loads the ones asked
for by name and hands each the same `RunSummary`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentv_ci.errors import ConfigError
from agentv_ci.model.result import RunSummary
from agentv_ci.security.redaction import redact_file

if TYPE_CHECKING:
    from agentv_ci.gating import GateDecision

__all__ = ["write_report", "write_reports"]


def write_report(name: str, summary: RunSummary, path: Path, *, repo_root: Path, **extras: Any) -> None:
    """Write one report with the reporter plugin registered as `name`.

    `extras` reach the reporter as `ReportOptions.extras` (`baseline`, `decision`, `selection`).
    """
    from agentv_ci.plugins import REPORTERS_NAMESPACE, ReportOptions, load_plugin_class

    cls = load_plugin_class(REPORTERS_NAMESPACE, name)
    if cls is None:
        raise ConfigError(f"no reporter named {name!r} is installed", hint="see `agentv-ci plugins`")
    baseline = extras.pop("baseline", None)
    options = ReportOptions(path=path, repo_root=repo_root, baseline=baseline, extras=extras)
    path.parent.mkdir(parents=True, exist_ok=True)
    from agentv_ci.reporting.gc_pause import paused_gc

    with paused_gc():
        cls().write(summary, options)
    # Whatever a reporter (a third-party one too) wrote passes the redaction layer: its rows were
    # redacted when written, this catches anything else that carried a secret in.
    redact_file(path)


def write_reports(
    summary: RunSummary,
    *,
    junit: Path | None = None,
    sarif: Path | None = None,
    markdown: Path | None = None,
    repo_root: Path,
    baseline: RunSummary | None = None,
    selection: dict[str, str] | None = None,
    decision: GateDecision | None = None,
    jsonl: Path | None = None,
    sarif_category: str | None = None,
) -> None:
    """Write every report that has a path. `selection` (eval path -> why it ran) overrides
    `summary.selection`; `decision` is the gate outcome shown in the Markdown verdict line (computed
    with default gates when omitted); `sarif_category` becomes the SARIF run's `automationDetails.id`."""
    extras: dict[str, Any] = {"baseline": baseline, "decision": decision}
    if selection is not None:
        extras["selection"] = selection
    if sarif_category:
        extras["sarif_category"] = sarif_category
    for name, path in (("jsonl", jsonl), ("junit", junit), ("sarif", sarif), ("markdown", markdown)):
        if path is not None:
            write_report(name, summary, path, repo_root=repo_root, **dict(extras))
