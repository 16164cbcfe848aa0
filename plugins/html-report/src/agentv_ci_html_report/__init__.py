"""agentv-ci-html-report: the `html` reporter, one self-contained page per run (see README.md)."""

from __future__ import annotations

from typing import ClassVar

from agentv_ci.api import ReportOptions, RunSummary
from agentv_ci_html_report.page import render_page

__all__ = ["HtmlReporter", "render_page"]


class HtmlReporter:
    """Writes one HTML page to `options.path`: no external resources, works offline and as a CI
    artifact. A pure function of the summary, the gate decision in `options.decision` (whose
    comparison it shows) and `options.baseline`."""

    api_version: ClassVar[str] = "1.1"

    def write(self, summary: RunSummary, options: ReportOptions) -> None:
        options.path.write_text(render_page(summary, options.decision, options.baseline), encoding="utf-8")
