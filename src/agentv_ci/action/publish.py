"""What one Action step leaves for people and later steps: annotations, the step summary, the sticky
PR comment and the step outputs. None of them changes the verdict."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agentv_ci.action.baseline import Baseline
from agentv_ci.action.log import ActionLog
from agentv_ci.action.paths import ActionPaths, relative_to
from agentv_ci.action.pr_record import write_pr_record
from agentv_ci.errors import ExitCode
from agentv_ci.gating import GateDecision
from agentv_ci.github.event import WorkflowRun
from agentv_ci.github.inputs import ActionInputs
from agentv_ci.model.result import RunSummary
from agentv_ci.security.redaction import redact


@dataclass
class Publisher:
    inputs: ActionInputs
    run: WorkflowRun
    env: Mapping[str, str]
    paths: ActionPaths
    log: ActionLog
    outputs_written: bool = False

    @property
    def workspace(self) -> Path:
        return self.paths.workspace

    def extra_reports(self) -> list[tuple[str, Path]]:
        """Reporter plugins to run besides the built-in reports: the HTML report with `html_report`."""
        return [("html", self.paths.html)] if self.inputs.html_report else []

    def html_written(self) -> bool:
        """Whether this step wrote the HTML report (asked for, and its reporter did not fail)."""
        return self.inputs.html_report and self.paths.html.is_file()

    def annotate(self, summary: RunSummary, decision: GateDecision) -> None:
        """An `::error`/`::warning` at each failing test's file and line (in GitHub Actions only)."""
        if not self.log.in_actions:
            return
        from agentv_ci.github.annotations import annotations
        from agentv_ci.security.streams import print_workflow_command

        for line in annotations(summary, decision, repo_root=self.workspace):
            print_workflow_command(line)

    def append_step_summary(self, text: str) -> None:
        target = self.env.get("GITHUB_STEP_SUMMARY")
        if not target:
            return
        try:
            with open(target, "a", encoding="utf-8") as handle:
                handle.write(redact(text))
        except OSError:
            self.log.warning("could not write the step summary")

    def comment(
        self, summary: RunSummary, decision: GateDecision, baseline: Baseline, *, note: str | None = None
    ) -> str:
        """Create or update the sticky PR comment; returns its URL ("" when none was written)."""
        from agentv_ci.action.pr_comment import post_comment, pr_to_comment

        number, why_not = pr_to_comment(self.inputs, self.run, self.workspace)
        if number is None:
            if why_not:
                self.log.notice(why_not)
            return ""
        url, line = post_comment(
            self.inputs,
            self.run,
            number,
            summary=summary,
            decision=decision,
            baseline=baseline.summary,
            workspace=self.workspace,
            note=note,
            html_report=self.html_written(),
        )
        if url or note is not None:  # a note's comment left unwritten is no news worth a notice
            self.log.echo(line)
        else:
            self.log.notice(line)
        return url

    def outputs(
        self, summary: RunSummary, decision: GateDecision, comment_url: str, *, skipped: str | None = None
    ) -> None:
        """The step outputs of a run; `skipped`: why nothing ran (`verdict=skipped`)."""
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
        from agentv_ci.github.outputs import write_outputs

        self.outputs_written = True
        if write_outputs(values, env=self.env) is None and self.env.get("GITHUB_OUTPUT"):
            self.log.warning("could not write the step outputs")

    def finish_without_evals(self, note: str, *, merged: RunSummary | None = None) -> int:
        """Nothing to run: the record of a run that selected nothing (an empty index.jsonl, a plan of
        no job with the shard, a `skipped` summary.json: reporting/skipped_run.py) and reports, so
        later upload steps and the merge of shards find them; the note in the log, the step summary
        and the comment, and a green step. `merged`: shards that all selected nothing, merged by
        `results:` (their record is written already). The comment only updates an earlier one (so
        no stale verdict stays on the PR); a PR that never had one gets none."""
        from agentv_ci.reporting import write_reports
        from agentv_ci.reporting.skipped_run import write_skipped_run
        from agentv_ci.running.sharding import parse_shard

        paths = self.paths
        self.log.echo(note)
        decision = GateDecision(passed=True, exit_code=ExitCode.OK, notes=[note])
        summary = merged
        if summary is None:
            shard = parse_shard(self.inputs.shard) if self.inputs.shard else None
            summary = write_skipped_run(paths.output_dir, note, shard=shard, dry_run=self.inputs.dry_run)
            write_pr_record(self.run, paths.output_dir)
        write_reports(summary, junit=paths.junit, sarif=paths.sarif, repo_root=self.workspace)
        paths.markdown.write_text(redact(f"## agentv-ci\n\n{note}\n"), encoding="utf-8")
        self.append_step_summary(f"## agentv-ci\n\n{note}\n")
        comment_url = self.comment(summary, decision, Baseline(), note=note)
        self.outputs(summary, decision, comment_url, skipped=note)
        return int(ExitCode.OK)
