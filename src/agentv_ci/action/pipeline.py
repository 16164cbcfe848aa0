"""`agentv-ci action`: one step of a workflow, from the event to the exit code.

select (on pull requests) -> run -> baseline -> gates + reports + step summary -> annotations ->
sticky PR comment -> step outputs. Commenting and outputs never change the verdict; finished results
are on disk before anything that talks to the network starts.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from agentv_ci.action.baseline import Baseline, resolve_baseline
from agentv_ci.action.fork_code import refuse_fork_code_with_secrets
from agentv_ci.action.ownership import hand_over
from agentv_ci.action.pr_record import expand_results, is_glob, write_pr_record
from agentv_ci.errors import AgentvCiError, ExitCode, UsageError
from agentv_ci.gating import GateDecision, GateOptions, check_gate_flags
from agentv_ci.github.annotations import workflow_command
from agentv_ci.github.event import WorkflowRun, read_workflow_run
from agentv_ci.github.inputs import ActionInputs, read_inputs
from agentv_ci.model.result import RunSummary
from agentv_ci.running.session import RunRequest
from agentv_ci.security.child_env import pass_through
from agentv_ci.security.redaction import redact, register_secret
from agentv_ci.security.streams import print_workflow_command

Echo = Callable[[str], None]


@dataclass
class _Paths:
    workspace: Path
    output_dir: Path
    junit: Path
    sarif: Path
    markdown: Path

    @property
    def results(self) -> Path:
        return self.output_dir / "index.jsonl"


def _paths(inputs: ActionInputs, workspace: Path) -> _Paths:
    def inside(text: str) -> Path:
        path = Path(text)
        return path if path.is_absolute() else workspace / path

    output_dir = inside(inputs.output_dir or ".agentv-ci/results")
    return _Paths(
        workspace=workspace,
        output_dir=output_dir,
        junit=inside(inputs.junit_path) if inputs.junit_path else output_dir / "junit.xml",
        sarif=inside(inputs.sarif_path) if inputs.sarif_path else output_dir / "results.sarif",
        markdown=output_dir / "summary.md",
    )


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


class ActionRun:
    """One invocation of the Action. `echo` prints to the log (stdout), `warn` to stderr."""

    def __init__(self, env: Mapping[str, str], echo: Echo, warn: Echo) -> None:
        self.env = env
        self.echo = echo
        self.warn = warn
        self.in_actions = env.get("GITHUB_ACTIONS") == "true"
        self.run: WorkflowRun = read_workflow_run(env)
        self.inputs: ActionInputs = read_inputs(env)
        self.workspace = (self.run.workspace or Path.cwd()).resolve()
        self.paths = _paths(self.inputs, self.workspace)
        self._merge_base: str | None = None
        self._unselecting: list[str] = []  # changed files that selected no eval

    # -- messages ---------------------------------------------------------------------------------

    def notice(self, text: str) -> None:
        if self.in_actions:
            return print_workflow_command(workflow_command("notice", text, title="agentv-ci"))
        self.echo(f"note: {text}")

    def warning(self, text: str) -> None:
        if self.in_actions:
            return print_workflow_command(workflow_command("warning", text, title="agentv-ci"))
        self.warn(f"warning: {text}")

    # -- stages -----------------------------------------------------------------------------------

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
        if self.in_actions:
            from agentv_ci.selection import mark_safe_directory

            mark_safe_directory(self.workspace)

    def eval_paths(self) -> list[Path]:
        return [self.workspace / p if not Path(p).is_absolute() else Path(p) for p in self.inputs.paths]

    def selection(self) -> tuple[list[Path], dict[str, str], str | None]:
        """(eval files to run, why each runs, a note when nothing is affected). On pull requests with
        `changed_only`, only the evals the PR's changes can affect; elsewhere every eval under `paths`."""
        paths = self.eval_paths()
        base = self.inputs.base_ref or (self.run.pull_request.base_sha if self.run.pull_request else "")
        if not (self.inputs.changed_only and base and (self.run.is_pull_request or self.inputs.base_ref)):
            return paths, {}, None
        from agentv_ci.action.selecting import select_changed

        found = select_changed(
            paths,
            base=base,
            workspace=self.workspace,
            env=self.env,
            targets_file=self._targets_file(),
            select_all_on=self.inputs.select_all_on,
            target_names=tuple(self.inputs.target),
            echo=self.echo,
            notice=self.notice,
        )
        self._merge_base = found.merge_base
        self._unselecting = found.unselecting
        return found.paths, found.reasons, found.note

    def merge_base(self) -> str | None:
        if self._merge_base is not None:
            return self._merge_base
        base = self.inputs.base_ref or (self.run.pull_request.base_sha if self.run.pull_request else "")
        if not base:
            return None
        from agentv_ci.selection import changed_files

        return changed_files(self.workspace, base, "HEAD").merge_base

    def request(self, paths: list[Path], selection: dict[str, str]) -> RunRequest:
        from agentv_ci.running.plan import PlanOptions
        from agentv_ci.running.sharding import parse_shard

        inputs = self.inputs
        targets_file = self._targets_file()
        return RunRequest(
            paths=paths,
            output_dir=self.paths.output_dir,
            plan=PlanOptions(
                targets=tuple(inputs.target),
                shard=parse_shard(inputs.shard) if inputs.shard else None,
                repeat=inputs.repeat,
                threshold=inputs.threshold,
            ),
            targets_file=targets_file,
            workers=inputs.workers,
            dry_run=inputs.dry_run,
            budget_usd=inputs.budget_usd,
            selection=selection,
            unselecting=tuple(self._unselecting),
            allow_outside=tuple(
                Path(p) if Path(p).is_absolute() else self.workspace / p for p in inputs.allow_outside_repo
            ),
        )

    def _targets_file(self) -> Path | None:
        if not self.inputs.targets_file:
            return None
        path = Path(self.inputs.targets_file)
        return path if path.is_absolute() else self.workspace / path

    def gate_options(self, has_baseline: bool) -> GateOptions:
        inputs = self.inputs
        check_gate_flags(inputs.max_regression, has_baseline)
        return GateOptions(
            threshold=inputs.threshold,
            min_pass_rate=inputs.min_pass_rate,
            min_mean_score=inputs.min_mean_score,
            max_regression=inputs.max_regression,
            fail_on_error=inputs.fail_on_error,
        )

    def load_results(self) -> RunSummary:
        """`results:` inputs merged into the output directory (one input is copied the same way)."""
        from agentv_ci.gating import rejudge
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
        from agentv_ci.reporting.console import render_console
        from agentv_ci.reporting.finish import gate_and_report

        inputs = self.inputs
        request: RunRequest | None = None
        paths: list[Path] = []
        if inputs.results:
            summary = self.load_results()
        else:
            refuse_fork_code_with_secrets(
                self.run, self.workspace, trusted=inputs.trust_fork_code, paths=self.eval_paths()
            )
            paths, selection, nothing = self.selection()
            if nothing is not None:
                return self.finish_without_evals(nothing)
            from agentv_ci.running.session import execute_run

            request = self.request(paths, selection)
            outcome = execute_run(request)
            for text in outcome.warnings:
                self.warn(f"warning: {text}")
            summary = outcome.summary
            write_pr_record(self.run, self.paths.output_dir)
        baseline = resolve_baseline(
            inputs,
            self.run,
            workspace=self.workspace,
            eval_paths=paths,
            request=request,
            merge_base=self.merge_base,
        )
        for text in baseline.warnings:
            self.warning(text)
        if baseline.source is not None:  # named in the log, the summary, the comment and summary.json
            from msgspec.structs import replace as with_fields

            from agentv_ci.reporting.baseline_report import record_baseline

            summary = with_fields(summary, baseline=baseline.source)
            record_baseline(self.paths.output_dir, baseline.source)
        options = self._options_for(baseline)
        decision = gate_and_report(
            summary,
            options,
            baseline=baseline.summary,
            junit=self.paths.junit,
            sarif=self.paths.sarif,
            markdown=self.paths.markdown,
            repo_root=self.workspace,
            sarif_category=inputs.sarif_category,
        )
        self.echo(render_console(summary, decision))
        self.annotate(summary, decision)
        comment_url = self.comment(summary, decision, baseline)
        self.outputs(summary, decision, comment_url)
        return int(decision.exit_code)

    def _options_for(self, baseline: Baseline) -> GateOptions:
        if (
            self.inputs.max_regression is not None
            and baseline.summary is None
            and self.inputs.baseline == "auto"
        ):
            self.warning("max_regression is not applied: `baseline: auto` found no baseline")
            from dataclasses import replace

            return replace(self.gate_options(True), max_regression=None)
        return self.gate_options(baseline.summary is not None or bool(self.inputs.baseline_ref))

    def finish_without_evals(self, note: str) -> int:
        """Nothing to run: empty results and reports (so later upload steps find their files), the
        note in the log, the step summary and the comment, and a green step."""
        from agentv_ci.reporting import write_reports
        from agentv_ci.reporting.results_file import write_summary_json

        self.echo(note)
        summary = RunSummary(results=[])
        decision = GateDecision(passed=True, exit_code=ExitCode.OK, notes=[note])
        self.paths.output_dir.mkdir(parents=True, exist_ok=True)
        self.paths.results.write_bytes(b"")
        write_summary_json(self.paths.output_dir / "summary.json", summary)
        write_pr_record(self.run, self.paths.output_dir)
        write_reports(summary, junit=self.paths.junit, sarif=self.paths.sarif, repo_root=self.workspace)
        self.paths.markdown.write_text(redact(f"## agentv-ci\n\n{note}\n"), encoding="utf-8")
        self._append_step_summary(f"## agentv-ci\n\n{note}\n")
        comment_url = self.comment(summary, decision, Baseline(), note=note)
        self.outputs(summary, decision, comment_url, verdict="skipped")
        return int(ExitCode.OK)

    def _append_step_summary(self, text: str) -> None:
        target = self.env.get("GITHUB_STEP_SUMMARY")
        if not target:
            return
        try:
            with open(target, "a", encoding="utf-8") as handle:
                handle.write(redact(text))
        except OSError:
            self.warning("could not write the step summary")

    def annotate(self, summary: RunSummary, decision: GateDecision) -> None:
        if not self.in_actions:
            return
        from agentv_ci.github.annotations import annotations

        for line in annotations(summary, decision, repo_root=self.workspace):
            print_workflow_command(line)

    def comment(
        self, summary: RunSummary, decision: GateDecision, baseline: Baseline, *, note: str | None = None
    ) -> str:
        """Create or update the sticky PR comment; returns its URL ("" when none was written)."""
        from agentv_ci.action.pr_comment import post_comment, pr_to_comment

        number, why_not = pr_to_comment(self.inputs, self.run, self.workspace)
        if number is None:
            if why_not:
                self.notice(why_not)
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
        )
        if url:
            self.echo(line)
        else:
            self.notice(line)
        return url

    def outputs(
        self, summary: RunSummary, decision: GateDecision, comment_url: str, *, verdict: str | None = None
    ) -> None:
        from agentv_ci.github.outputs import run_outputs, write_outputs

        values = run_outputs(
            summary,
            decision,
            results_path=_relative(self.paths.results, self.workspace),
            junit_path=_relative(self.paths.junit, self.workspace),
            sarif_path=_relative(self.paths.sarif, self.workspace),
            comment_url=comment_url,
        )
        if verdict is not None:
            values["verdict"] = verdict
        if write_outputs(values, env=self.env) is None and self.env.get("GITHUB_OUTPUT"):
            self.warning("could not write the step outputs")

    def hand_over_files(self) -> None:
        hand_over(
            [
                self.paths.output_dir,
                self.paths.junit,
                self.paths.sarif,
                self.workspace / ".agentv-ci",
            ],
            self.workspace,
        )


def run_action(env: Mapping[str, str] | None = None) -> int:
    """Run the Action step. Expected errors propagate (the CLI's error boundary prints them and exits
    2/3) after an `::error` annotation, the output `verdict=error`, and the files written so far
    handed to the workspace owner."""
    environment = os.environ if env is None else env
    in_actions = environment.get("GITHUB_ACTIONS") == "true"

    def failed(exc: AgentvCiError) -> None:
        if in_actions:  # an annotation on the run page; the error boundary prints the rest
            print_workflow_command(workflow_command("error", exc.message, title="agentv-ci"))
        from agentv_ci.github.outputs import write_outputs

        write_outputs({"verdict": "error"}, env=environment)

    try:
        action = ActionRun(
            environment, echo=lambda s: print(s, flush=True), warn=lambda s: print(s, file=sys.stderr)
        )
    except AgentvCiError as exc:
        failed(exc)
        raise
    try:
        return action.execute()
    except AgentvCiError as exc:
        failed(exc)
        raise
    finally:
        action.hand_over_files()
