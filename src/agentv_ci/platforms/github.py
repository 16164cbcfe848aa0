"""The GitHub Action's platform: `GITHUB_*` and `INPUT_*`, the sticky PR comment, step outputs,
`::error` annotations, the step summary and results artifacts, as the Action always had them."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from agentv_ci.action.baseline import Baseline, artifact_baseline
from agentv_ci.action.history import with_history
from agentv_ci.action.log import ActionLog
from agentv_ci.gating import GateDecision
from agentv_ci.github import annotations as workflow_annotations
from agentv_ci.github.event import read_workflow_run
from agentv_ci.github.inputs import read_inputs
from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.model.waivers import WaiverBook
from agentv_ci.platforms.contract import StepBasis
from agentv_ci.security.redaction import redact
from agentv_ci.security.streams import print_workflow_command

__all__ = ["GitHubPlatform"]


class GitHubPlatform(StepBasis):
    """A step of a GitHub Actions workflow (see `platforms.contract.Platform`)."""

    name = "github"

    def __init__(self, env: Mapping[str, str], log: ActionLog) -> None:
        super().__init__(read_workflow_run(env), read_inputs(env))
        self.env = env
        self.log = log

    def default_reports(self, output_dir: Path) -> list[tuple[str, Path]]:
        return []  # JUnit and SARIF have their own inputs on GitHub

    def annotate(self, summary: RunSummary, decision: GateDecision) -> None:
        """An `::error`/`::warning` at each failing test's file and line (in GitHub Actions only)."""
        if not self.log.in_actions:
            return
        for line in workflow_annotations.annotations(summary, decision, repo_root=self.workspace):
            print_workflow_command(line)

    def append_summary(self, text: str) -> None:
        target = self.env.get("GITHUB_STEP_SUMMARY")
        if not target:
            return
        try:
            with open(target, "a", encoding="utf-8") as handle:
                handle.write(redact(text))
        except OSError:
            self.log.warning("could not write the step summary")

    def comment(
        self,
        summary: RunSummary,
        decision: GateDecision,
        baseline: RunSummary | None,
        *,
        note: str | None,
        html_report: bool,
    ) -> str:
        # lazy: `action.pr_comment` loaded only when `comment` runs
        from agentv_ci.action.pr_comment import post_comment, pr_to_comment

        number, why_not = pr_to_comment(self._inputs, self._run, self.workspace)
        if number is None:
            if why_not:
                self.log.notice(why_not)
            return ""
        url, line = post_comment(
            self._inputs,
            self._run,
            number,
            summary=summary,
            decision=decision,
            baseline=baseline,
            workspace=self.workspace,
            note=note,
            html_report=html_report,
        )
        if url or note is not None:  # a note's comment left unwritten is no news worth a notice
            self.log.echo(line)
        else:
            self.log.notice(line)
        return url

    def write_outputs(self, values: Mapping[str, str]) -> bool:
        # lazy: the step outputs writer loaded only when `write_outputs` runs
        from agentv_ci.github.outputs import write_outputs

        return write_outputs(values, env=self.env) is not None or not self.env.get("GITHUB_OUTPUT")

    def artifact_baseline(self) -> Baseline:
        return artifact_baseline(self._inputs, self._run)

    def flaky_history(self, current: Iterable[TestResult], book: WaiverBook | None) -> WaiverBook | None:
        return with_history(self._inputs, self._run, current, book, self.log)

    @contextmanager
    def section(self, name: str, header: str) -> Iterator[None]:
        yield  # the Action's log is one step's: its output is folded by the step already
