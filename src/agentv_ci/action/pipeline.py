"""`agentv-ci action`: one step of a workflow, from the event to the exit code.

select (on pull requests) -> run -> baseline -> gates + reports + step summary -> annotations ->
sticky PR comment -> step outputs. Commenting and outputs never change the verdict; finished results
are on disk before anything that talks to the network starts. An interrupted step (SIGINT, SIGTERM)
still writes the reports of what finished and exits 130 (action/interrupted.py).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from agentv_ci.action.baseline import Baseline, not_compared, resolve_baseline
from agentv_ci.action.cache_origin import CacheDirectory, action_cache
from agentv_ci.action.extra_packages import install_extra_packages
from agentv_ci.action.fork_code import refuse_fork_code_with_secrets
from agentv_ci.action.log import ActionLog
from agentv_ci.action.options import gate_options, gate_options_for, run_request
from agentv_ci.action.ownership import hand_over
from agentv_ci.action.paths import action_paths
from agentv_ci.action.pr_record import expand_results, is_glob, write_pr_record
from agentv_ci.action.publish import Publisher
from agentv_ci.action.rerun_bill import RerunBill
from agentv_ci.action.selecting import base_of, eval_paths, merge_base_of, select_evals
from agentv_ci.errors import AgentvCiError, ConfigError, UsageError
from agentv_ci.finishing import ComparedBaseline, GatePolicy, PostRun, PostRunRequest, ReportDestinations
from agentv_ci.gating import GateOptions, rejudge
from agentv_ci.github.annotations import workflow_command
from agentv_ci.github.event import WorkflowRun
from agentv_ci.github.inputs import ActionInputs
from agentv_ci.github.step_summary import append_step_summary
from agentv_ci.model.baseline import BaselineSource
from agentv_ci.model.result import RunSummary
from agentv_ci.model.waivers import WaiverBook
from agentv_ci.platforms.contract import Platform
from agentv_ci.reporting import reporter_class
from agentv_ci.running.session import RunInterrupted, RunRequest, execute_run
from agentv_ci.security.child_env import pass_through
from agentv_ci.security.redaction import register_secret
from agentv_ci.security.streams import print_workflow_command

INTERRUPTED_EARLY = "INCONCLUSIVE - interrupted before any result was reported"


class ActionRun:
    """One invocation of the Action. `echo` prints to the log (stdout), `warn` to stderr."""

    def __init__(self, env: Mapping[str, str], log: ActionLog, platform: Platform) -> None:
        self.env = env
        self.log = log
        self.platform = platform
        self.run: WorkflowRun = platform.run
        self.inputs: ActionInputs = platform.inputs
        self.workspace = (self.run.workspace or Path.cwd()).resolve()
        self.paths = action_paths(self.inputs, self.workspace)
        self.publisher = Publisher(platform, self.paths, log)
        self._merge_base: str | None = None
        self.cache: CacheDirectory | None = None  # `cache: true`: the directory, checked and stamped
        self.waivers: WaiverBook | None = None  # the quarantine, from the pull request's base
        self.finishing = PostRun(echo=log.echo, warn=log.warn, step_summary=append_step_summary)

    def prepare(self) -> None:
        token = self.inputs.github_token
        if token:
            # Masked (`::add-mask::` in GitHub Actions, by the CLI's announcer) before anything else
            # is printed, and redacted from every report and comment.
            register_secret(token)
        if self.inputs.pass_env:
            pass_through(self.inputs.pass_env)
        if not self.workspace.is_dir():
            raise AgentvCiError(f"the workspace {self.workspace} does not exist")
        os.chdir(self.workspace)
        if self.inputs.html_report:
            self.check_html_reporter()
        if self.log.in_actions:
            # lazy: git change selection loaded only when `prepare` runs
            from agentv_ci.selection import mark_safe_directory

            mark_safe_directory(self.workspace)
        install_extra_packages(self.inputs.extra_packages, self.log)

    def check_html_reporter(self) -> None:
        """`html_report: true` needs the HTML reporter plugin: bad input before anything runs, not a
        missing page after the money is spent; a page left by an earlier step is removed."""

        try:
            reporter_class("html")
        except ConfigError:
            raise UsageError(
                "input `html_report`: the HTML reporter plugin (agentv-ci-html-report) is not installed",
                hint="the agentv-ci image ships it; elsewhere `pip install ./plugins/html-report` "
                "(this repository) or `pip install agentv-ci-html-report`",
            ) from None
        self.paths.html.unlink(missing_ok=True)

    def read_quarantine(self) -> None:
        """The quarantine from the pull request's base, before anything runs (an invalid file is bad
        input; the PR's own entries have no effect). After the fork-code refusal: a fork's run is
        refused for what it is, not for a base commit it has not fetched."""
        # lazy: git change selection loaded only when `read_quarantine` runs
        from agentv_ci.selection.quarantine_source import trusted_quarantine

        self.waivers = trusted_quarantine(self.workspace, base_of(self.inputs, self.run) or None, self.env)

    def merge_base(self) -> str | None:
        if self._merge_base is None:
            self._merge_base = merge_base_of(self.inputs, self.run, self.workspace)
        return self._merge_base

    def load_results(self) -> RunSummary:
        """`results:` inputs merged into the output directory (one input is copied the same way)."""
        # lazy: `running.merging` loaded only when `load_results` runs
        from agentv_ci.running.merging import merge_runs

        for text in self.inputs.results:
            if is_glob(text) and not expand_results([text], self.workspace):
                raise UsageError(f"input `results`: {text!r} matches nothing")
        sources = expand_results(self.inputs.results, self.workspace)
        merged = merge_runs(sources, self.paths.output_dir)
        return rejudge(merged.summary, self.inputs.threshold)

    def execute(self) -> int:
        """The whole step; returns the exit code."""
        self.prepare()

        inputs = self.inputs
        request: RunRequest | None = None
        paths: list[Path] = []
        stopped: str | None = None  # what a SIGINT/SIGTERM cut short
        if inputs.results:
            self.read_quarantine()
            summary = self.load_results()
            if summary.skipped:  # every shard selected nothing, and none is missing
                return self.publisher.finish_without_evals(summary.skipped, merged=summary)
        else:
            refuse_fork_code_with_secrets(
                self.run,
                self.workspace,
                trusted=inputs.trust_fork_code,
                paths=eval_paths(inputs, self.workspace),
            )
            self.read_quarantine()
            selected = select_evals(inputs, self.run, self.workspace, self.env, self.log)
            self._merge_base = selected.merge_base
            if selected.note is not None:
                return self.publisher.finish_without_evals(selected.note)
            paths = selected.paths
            request = run_request(
                inputs,
                selected,
                workspace=self.workspace,
                output_dir=self.paths.output_dir,
                log=self.log,
                secrets_withheld=self.run.secrets_withheld,
            )
            # `cache: true`: the run and the baseline re-run answer from (and fill) `cache_dir`
            self.cache = action_cache(inputs, self.run, self.workspace, request, warn=self.log.warning)
            try:
                with self.platform.section("agentv_ci_run", "agentv-ci: running the selected evals"):
                    outcome = execute_run(request)
            except RunInterrupted as interrupted:  # not_run rows and summary.json are written
                outcome, stopped = interrupted.outcome, "the run"
            for text in outcome.warnings:
                self.log.warn(f"warning: {text}")
            summary = outcome.summary
            write_pr_record(self.run, self.paths.output_dir)
        if stopped is None:
            baseline, stopped, summary = self.baseline(paths, request, summary)
        else:
            baseline = not_compared(inputs, "the run was interrupted before it")
            for text in baseline.warnings or ["the run was interrupted: no baseline is compared"]:
                self.log.warning(text)
        # the baseline is named in the log, the summary, the comment and summary.json (finishing/)
        if stopped is not None:
            # lazy: `action.interrupted` loaded only when `execute` runs
            from agentv_ci.action.interrupted import finish_interrupted

            options = gate_options(inputs, has_baseline=True)
            post_request = self.post_run(summary, baseline, lambda _ran, _compared: options, stopped)
            return finish_interrupted(self.publisher, self.finishing, post_request, baseline)
        return self.finish(summary, baseline)

    def baseline(
        self, paths: list[Path], request: RunRequest | None, summary: RunSummary
    ) -> tuple[Baseline, str | None, RunSummary]:
        """The baseline (with no baseline input: the committed sidecars of the eval files `summary`'s
        results came from), what was interrupted ("the baseline", or None), and `summary` with what a
        baseline re-run spent on its bill (action/rerun_bill.py)."""
        bill: RerunBill | None = None
        if self.inputs.baseline_ref and request is not None and not summary.dry_run:
            bill = RerunBill(summary, self.inputs.baseline_ref, self.log.echo)
            why = bill.why_not_rerun()
            if why is not None:
                baseline = not_compared(self.inputs, why)
                for text in baseline.warnings:
                    self.log.warning(text)
                return baseline, None, self.charge(bill, summary, None)
            commit = self.merge_base() if self.inputs.baseline_ref == "merge-base" else None
            request = bill.request(request, commit)
        try:
            baseline = resolve_baseline(
                self.inputs,
                self.run,
                workspace=self.workspace,
                eval_paths=paths,
                request=request,
                merge_base=self.merge_base,
                results=summary.results,
                from_artifact=self.platform.artifact_baseline,
            )
        except KeyboardInterrupt:  # a baseline re-run or download cut short: the results stand
            reason = "the baseline was interrupted"
            return Baseline(source=BaselineSource("none", reason=reason)), "the baseline", summary
        for text in baseline.warnings:
            self.log.warning(text)
        if bill is not None:
            rerun = (
                baseline.summary if baseline.source is not None and baseline.source.kind == "commit" else None
            )
            summary = self.charge(bill, summary, rerun)
        return baseline, None, summary

    def charge(self, bill: RerunBill, summary: RunSummary, rerun: RunSummary | None) -> RunSummary:
        """`summary` with the baseline re-run's spend added, recorded in summary.json too."""
        charged = bill.charge(summary, rerun)
        bill.record(self.paths.output_dir, charged, rerun)
        return charged

    def post_run(
        self, summary: RunSummary, baseline: Baseline, gates: GatePolicy, stopped: str | None
    ) -> PostRunRequest:
        """The post-run service's request for this step: `baseline` as resolved above, recorded in
        summary.json; the reports the inputs and the platform ask for."""
        resolved = ComparedBaseline(baseline.summary, baseline.source)
        return PostRunRequest(
            summary=summary,
            baseline=lambda _ran: resolved,
            gates=gates,
            reports=ReportDestinations(
                junit=self.paths.junit,
                sarif=self.paths.sarif,
                markdown=self.paths.markdown,
                plugins=tuple(self.publisher.extra_reports()),
                sarif_category=self.inputs.sarif_category,
            ),
            repo_root=self.workspace,
            run_dir=self.paths.output_dir,
            interrupted=stopped,
        )

    def finish(self, summary: RunSummary, baseline: Baseline) -> int:
        """Gates, reports, step summary, annotations, the comment and the outputs of a whole run."""

        def gates(ran: RunSummary, _compared: ComparedBaseline) -> GateOptions:
            self.waivers = self.platform.flaky_history(ran.results, self.waivers)
            return replace(gate_options_for(self.inputs, baseline, self.log), waivers=self.waivers)

        finished = self.finishing.finish(self.post_run(summary, baseline, gates, None))
        summary, decision = finished.summary, finished.decision
        self.publisher.annotate(summary, decision)
        comment_url = self.publisher.comment(summary, decision, baseline)
        self.publisher.outputs(summary, decision, comment_url)
        return int(decision.exit_code)

    def interrupted_early(self) -> None:
        """Stopped before a result was reported (or while it was): the outputs say so, if none were set."""
        if not self.publisher.outputs_written:
            self.publisher.set_outputs({"verdict": "inconclusive", "verdict_text": INTERRUPTED_EARLY})

    def hand_over_files(self) -> None:
        paths = self.paths
        written = [paths.output_dir, paths.junit, paths.sarif, self.workspace / ".agentv-ci"]
        if self.cache is not None:
            written += self.cache.seal()  # a fork's run stamps the cache again, whatever its code did
        hand_over(written, self.workspace)


def run_action(env: Mapping[str, str] | None = None) -> int:
    """Run the GitHub Action step (see `run_step`)."""
    # lazy: `platforms.github` loaded only when `run_action` runs
    from agentv_ci.platforms.github import GitHubPlatform

    environment = os.environ if env is None else env
    in_actions = environment.get("GITHUB_ACTIONS") == "true"
    log = ActionLog(
        echo=lambda s: print(s, flush=True), warn=lambda s: print(s, file=sys.stderr), in_actions=in_actions
    )

    def failed(exc: AgentvCiError) -> None:
        if in_actions:  # an annotation on the run page; the error boundary prints the rest
            print_workflow_command(workflow_command("error", exc.message, title="agentv-ci"))
        # lazy: the step outputs writer loaded only when `failed` runs
        from agentv_ci.github.outputs import write_outputs

        write_outputs({"verdict": "error"}, env=environment)

    return run_step(environment, log, lambda: GitHubPlatform(environment, log), failed)


def run_step(
    env: Mapping[str, str],
    log: ActionLog,
    platform: Callable[[], Platform],
    failed: Callable[[AgentvCiError], None],
) -> int:
    """Run one step on the platform `platform()` builds. Expected errors propagate (the CLI's error
    boundary prints them and exits 2/3) after `failed` (the platform's error mark and `verdict=error`)
    and the files written so far handed to the workspace owner. SIGTERM stops the step as SIGINT
    does (exit 130)."""
    # lazy: `action.interrupts` loaded only when `run_step` runs
    from agentv_ci.action.interrupts import sigterm_interrupts

    with sigterm_interrupts():
        try:
            action = ActionRun(env, log, platform())
        except AgentvCiError as exc:
            failed(exc)
            raise
        try:
            return action.execute()
        except AgentvCiError as exc:
            failed(exc)
            raise
        except KeyboardInterrupt:
            action.interrupted_early()
            raise
        finally:
            action.hand_over_files()
