"""What differs per CI platform, behind one small interface the Action's pipeline calls.

The pipeline (action/pipeline.py: select -> run -> baseline -> gate -> reports) is one; a platform
adapter says which run this is and which range of commits changed (`run`), where the comment goes,
where a baseline artifact and the history come from, where outputs and annotations go, and how the
log groups long output. `platforms.github` wraps what the GitHub Action always did;
`platforms.gitlab.platform` is a GitLab CI job's. An adapter never changes the verdict: comments,
outputs and annotations are written after it is decided, and their failures are log lines.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from agentv_ci.gating import GateDecision
from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.model.waivers import WaiverBook

if TYPE_CHECKING:
    from agentv_ci.action.baseline import Baseline
    from agentv_ci.github.event import WorkflowRun
    from agentv_ci.github.inputs import ActionInputs

__all__ = ["Platform", "StepBasis"]


class StepBasis:
    """What every platform's step holds alike: the run it is, the inputs it was given, where it runs."""

    def __init__(self, run: WorkflowRun, inputs: ActionInputs) -> None:
        self._run = run
        self._inputs = inputs

    @property
    def run(self) -> WorkflowRun:
        return self._run

    @property
    def inputs(self) -> ActionInputs:
        return self._inputs

    @property
    def workspace(self) -> Path:
        return (self._run.workspace or Path.cwd()).resolve()


class Platform(Protocol):
    """One CI platform's side of a step. `run` is the event and its changed range (the pull or merge
    request's base commit, head commit, whether it comes from a fork), `inputs` the step's settings."""

    name: str  # "github", "gitlab": the log's and the messages' word for the platform

    @property
    def run(self) -> WorkflowRun: ...

    @property
    def inputs(self) -> ActionInputs: ...

    def default_reports(self, output_dir: Path) -> list[tuple[str, Path]]:
        """Reports (reporter plugin name, path) the platform's own widgets read, written every run."""

    def annotate(self, summary: RunSummary, decision: GateDecision) -> None:
        """Mark each failing test at its file and line where the platform shows such marks."""

    def append_summary(self, text: str) -> None:
        """Add `text` (Markdown) to the job's summary page, where the platform has one."""

    def comment(
        self,
        summary: RunSummary,
        decision: GateDecision,
        baseline: RunSummary | None,
        *,
        note: str | None,
        html_report: bool,
    ) -> str:
        """Create or edit the one sticky comment (note) of this step on the pull or merge request;
        returns its URL ("" when none was written, with a line in the log saying why). A `note` (no
        eval ran) only edits an earlier comment."""

    def write_outputs(self, values: Mapping[str, str]) -> bool:
        """Publish the step's outputs; False when they could not be written (a warning follows)."""

    def artifact_baseline(self) -> Baseline:
        """`baseline: auto`: the newest complete results artifact of the base branch, or none with
        the reason (never raises for an API or archive failure)."""

    def flaky_history(self, current: Iterable[TestResult], book: WaiverBook | None) -> WaiverBook | None:
        """`history: N`: `book` with the flaky waivers the base branch's last N runs justify."""

    def section(self, name: str, header: str) -> AbstractContextManager[None]:
        """A block of the job log that can be folded (long output: the run's progress)."""
