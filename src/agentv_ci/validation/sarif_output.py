"""`validate --format sarif`: diagnostics in the same SARIF shape as run reports (one rule per code,
repo-relative locations under `%SRCROOT%`, stable fingerprints), so one upload step serves both."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentv_ci import __version__
from agentv_ci.validation.validator import ValidationReport


def sarif_log(report: ValidationReport, base: Path | None = None) -> dict[str, Any]:
    # lazy: `reporting.sarif` loaded only when `sarif_log` runs
    from agentv_ci.reporting.sarif import sarif_from_diagnostics

    return sarif_from_diagnostics(report.diagnostics, base or Path.cwd(), version=__version__)


def render_sarif(report: ValidationReport, base: Path | None = None) -> str:
    return json.dumps(sarif_log(report, base), indent=2, ensure_ascii=False)
