"""What one step leaves for people and later steps: annotations, the step summary, the sticky PR or MR
comment and the step outputs, through the platform's adapter. None of them changes the verdict."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agentv_ci.action.baseline import Baseline
from agentv_ci.action.log import ActionLog
from agentv_ci.action.paths import ActionPaths, relative_to
from agentv_ci.action.pr_record import write_pr_record
from agentv_ci.errors import ExitCode
from agentv_ci.finishing import ReportDestinations, write_run_reports
from agentv_ci.gating import GateDecision
from agentv_ci.github.event import WorkflowRun
from agentv_ci.github.inputs import ActionInputs
from agentv_ci.model.result import RunSummary
from agentv_ci.platforms.contract import Platform
from agentv_ci.running.sharding import parse_shard
from agentv_ci.security.redaction import redact


@dataclass
class Publisher:
    """The step's shared publishing logic; what lands where is the platform's (platforms/contract.py)."""

    platform: Platform
    paths: ActionPaths
    log: ActionLog
    outputs_written: bool = False

    @property
    def inputs(self) -> ActionInputs:
        return self.platform.inputs

    @property
    def run(self) -> WorkflowRun:
        return self.platform.run

    @property
    def workspace(self) -> Path:
        return self.paths.workspace

    def extra_reports(self) -> list[tuple[str, Path]]:
        """Reporter plugins to run besides the built-in reports: the platform's own (GitLab's Code
        Quality and metrics) and the HTML report with `html_report`."""
        html = [("html", self.paths.html)] if self.inputs.html_report else []
        return [*self.platform.default_reports(self.paths.output_dir), *html]

    def html_written(self) -> bool:
        """Whether this step wrote the HTML report (asked for, and its reporter did not fail)."""
        return self.inputs.html_report and self.paths.html.is_file()

    def annotate(self, summary: RunSummary, decision: GateDecision) -> None:
        """A mark at each failing test's file and line, where the platform shows them."""
        self.platform.annotate(summary, decision)

    def comment(
        self, summary: RunSummary, decision: GateDecision, baseline: Baseline, *, note: str | None = None
    ) -> str:
        """Create or update the sticky comment; returns its URL ("" when none was written)."""
        return self.platform.comment(
            summary, decision, baseline.summary, note=note, html_report=self.html_written()
        )

    def outputs(
        self, summary: RunSummary, decision: GateDecision, comment_url: str, *, skipped: str | None = None
    ) -> None:
        """The step outputs of a run; `skipped`: why nothing ran (`verdict=skipped`)."""
        # lazy: the step outputs writer loaded only when `outputs` runs
        from agentv_ci.github.outputs import run_outputs

        values = run_outputs(
            summary,
            decision,
            results_path=relative_to(self.paths.results, self.workspace),
            junit_path=relative_to(self.paths.junit, self.workspace),
            sarif_path=relative_to(self.paths.sarif, self.workspace),
            comment_url=comment_url,
            html_path=relative_to(self.paths.html, self.workspace) if self.html_written() else None,
        )
        if skipped is not None:  # not PASSED next to verdict=skipped: nothing ran to pass
            values.update(verdict="skipped", verdict_text=f"SKIPPED: {skipped}")
        self.set_outputs(values)

    def set_outputs(self, values: Mapping[str, str]) -> None:
        """Append step outputs (a name set again later wins)."""
        self.outputs_written = True
        if not self.platform.write_outputs(values):
            self.log.warning("could not write the step outputs")

    def finish_without_evals(self, note: str, *, merged: RunSummary | None = None) -> int:
        """Nothing to run: the record of a run that selected nothing (an empty index.jsonl, a plan of
        no job with the shard, a `skipped` summary.json: results/skipped_run.py) and reports, so
        later upload steps and the merge of shards find them; the note in the log, the step summary
        and the comment, and a green step. `merged`: shards that all selected nothing, merged by
        `results:` (their record is written already). The comment only updates an earlier one (so
        no stale verdict stays on the PR); a PR that never had one gets none."""
        # lazy: `results.skipped_run` loaded only when `finish_without_evals` runs
        from agentv_ci.results.skipped_run import write_skipped_run

        paths = self.paths
        self.log.echo(note)
        decision = GateDecision(passed=True, exit_code=ExitCode.OK, notes=[note])
        summary = merged
        if summary is None:
            shard = parse_shard(self.inputs.shard) if self.inputs.shard else None
            summary = write_skipped_run(paths.output_dir, note, shard=shard, dry_run=self.inputs.dry_run)
            write_pr_record(self.run, paths.output_dir)
        destinations = ReportDestinations(
            junit=paths.junit,
            sarif=paths.sarif,
            plugins=tuple(self.platform.default_reports(paths.output_dir)),
        )
        write_run_reports(summary, destinations, repo_root=self.workspace)  # no gate: nothing ran
        paths.markdown.write_text(redact(f"## agentv-ci\n\n{note}\n"), encoding="utf-8")
        self.platform.append_summary(f"## agentv-ci\n\n{note}\n")
        comment_url = self.comment(summary, decision, Baseline(), note=note)
        self.outputs(summary, decision, comment_url, skipped=note)
        return int(ExitCode.OK)
