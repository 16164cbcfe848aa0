"""The one post-run service: baseline -> gate -> reports -> console, after a run has results.

`run`, `report`, the GitHub Action and the GitLab job (through the Action's pipeline) all finish a
run here, so their verdicts, exit codes and report bytes cannot drift. What differs per caller comes
in as values and collaborators: how the baseline is found, the gate options, where the reports go,
where the console and the job's step summary are written. It sits above `github/` (the step
summary) and below `commands/` and `action/` (docs/architecture.md).
"""

from agentv_ci.finishing.baseline import BaselineResolver, ComparedBaseline, baseline_on_disk, compare
from agentv_ci.finishing.gate import GatePolicy, gate, history_gates, interrupted_verdict
from agentv_ci.finishing.reports import ReportDestinations, write_run_reports
from agentv_ci.finishing.service import Finished, PostRun, PostRunRequest, StepSummary

__all__ = [
    "BaselineResolver",
    "ComparedBaseline",
    "Finished",
    "GatePolicy",
    "PostRun",
    "PostRunRequest",
    "ReportDestinations",
    "StepSummary",
    "baseline_on_disk",
    "compare",
    "gate",
    "history_gates",
    "interrupted_verdict",
    "write_run_reports",
]
