"""JSONL reporter: the run's results as an AgentV-compatible `index.jsonl`."""

from __future__ import annotations

from agentv_ci.model.result import RunSummary
from agentv_ci.plugins import ReportOptions
from agentv_ci.results.results_file import ResultsWriter

__all__ = ["JsonlReporter"]


class JsonlReporter:
    """Writes one row per result to `options.path` (replacing the file)."""

    def write(self, summary: RunSummary, options: ReportOptions) -> None:
        options.path.unlink(missing_ok=True)
        with ResultsWriter(options.path) as writer:
            for result in summary.results:
                writer.append(result)
