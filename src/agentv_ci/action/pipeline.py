"""`agentv-ci action`: one step of a workflow, from the event to the exit code.

select (on pull requests) -> run -> baseline -> gates + reports + step summary -> annotations ->
sticky PR comment -> step outputs. Commenting and outputs never change the verdict; finished results
are on disk before anything that talks to the network starts.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from agentv_ci.action.baseline import Baseline, resolve_baseline
from agentv_ci.action.fork_code import refuse_fork_code_with_secrets
from agentv_ci.action.ownership import hand_over
from agentv_ci.errors import AgentvCiError, ExitCode, UsageError
from agentv_ci.gating import GateDecision, GateOptions, check_gate_flags
from agentv_ci.github.annotations import workflow_command
from agentv_ci.github.event import WorkflowRun, read_workflow_run
from agentv_ci.github.inputs import ActionInputs, read_inputs
from agentv_ci.model.result import RunSummary
from agentv_ci.running.session import RunRequest
from agentv_ci.security.child_env import pass_through
from agentv_ci.security.redaction import redact, register_secret

Echo = Callable[[str], None]
PR_RECORD = "pull_request.json"


def _is_glob(text: str) -> bool:
    return any(ch in text for ch in "*?[")


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

    # -- messages ---------------------------------------------------------------------------------

    def notice(self, text: str) -> None:
        self.echo(workflow_command("notice", text, title="agentv-ci") if self.in_actions else f"note: {text}")

    def warning(self, text: str) -> None:
        if self.in_actions:
            self.echo(workflow_command("warning", text, title="agentv-ci"))
        else:
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
        from agentv_ci.selection import changed_files, select_changed_evals

        changes = changed_files(self.workspace, base, "HEAD")
        self._merge_base = changes.merge_base
        selection = select_changed_evals(
            paths, changes, repo_root=self.workspace, env=self.env, select_all_on=self.inputs.select_all_on
        )
        for removed in selection.removed:
            self.notice(f"eval removed by this change: {removed}")
        if not selection.selected:
            note = (
                f"No eval is affected by the changes since {changes.merge_base[:12]} "
                f"({len(changes.files)} changed file(s), {selection.total} eval file(s) checked)."
            )
            return [], {}, note
        self.echo(f"selected {len(selection.selected)} of {selection.total} eval file(s):")
        for chosen in selection.selected:
            self.echo(f"  {_relative(chosen.path, self.workspace)}: {'; '.join(chosen.reasons)}")
        return [s.path for s in selection.selected], selection.as_summary_selection(), None

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
        targets_file = None
        if inputs.targets_file:
            targets_file = Path(inputs.targets_file)
            targets_file = targets_file if targets_file.is_absolute() else self.workspace / targets_file
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
            allow_outside=tuple(
                Path(p) if Path(p).is_absolute() else self.workspace / p for p in inputs.allow_outside_repo
            ),
        )

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

        sources: list[Path] = []
        for text in self.inputs.results:
            path = Path(text) if Path(text).is_absolute() else self.workspace / text
            if _is_glob(text):
                matches = sorted(p for p in path.parent.glob(path.name) if p.exists())
                if not matches:
                    raise UsageError(f"input `results`: {text!r} matches nothing")
                sources += matches
            else:
                sources.append(path)
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
            refuse_fork_code_with_secrets(self.run, self.workspace, trusted=inputs.trust_fork_code)
            paths, selection, nothing = self.selection()
            if nothing is not None:
                return self.finish_without_evals(nothing)
            from agentv_ci.running.session import execute_run

            request = self.request(paths, selection)
            outcome = execute_run(request)
            for text in outcome.warnings:
                self.warn(f"warning: {text}")
            summary = outcome.summary
            self.record_pull_request()
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
        self.record_pull_request()
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
            self.echo(line)

    def pr_number(self) -> int | None:
        if self.inputs.pr_number is not None:
            return self.inputs.pr_number
        return self.run.pull_request.number if self.run.pull_request else None

    def comment(
        self, summary: RunSummary, decision: GateDecision, baseline: Baseline, *, note: str | None = None
    ) -> str:
        """Create or update the sticky PR comment; returns its URL ("" when none was written)."""
        if not self.inputs.comment:
            return ""
        number = self.inputs.pr_number
        if number is None and self.run.pull_request is not None:
            number = self.run.pull_request.number
        if number is None and not self.inputs.results:
            return ""  # push, schedule, dispatch: nothing to comment on
        from agentv_ci.github.comment import (
            comment_marker,
            marker_key,
            post_sticky_comment,
            render_comment,
            render_note_comment,
        )

        if number is None:
            number = self.recorded_pr_number()
            if number is None:
                return ""
        key = self.run.workflow + (f"/{self.inputs.comment_key}" if self.inputs.comment_key else "")
        marker = comment_marker(marker_key(key, self.inputs.paths))
        if note is not None:
            body = render_note_comment(note, run_url=self.run.run_url, marker=marker)
        else:
            body = render_comment(
                summary,
                decision,
                baseline=baseline.summary,
                repo_root=self.workspace,
                run_url=self.run.run_url,
                marker=marker,
            )
        outcome = post_sticky_comment(
            token=self.inputs.github_token,
            repository=self.run.repository,
            body=body,
            marker=marker,
            event=self.run.payload,
            event_name=self.run.event_name,
            pr_number=number,
            api_url=self.run.api_url,
        )
        if outcome.action == "skipped":
            self.notice(outcome.reason or "PR comment skipped")
            return ""
        self.echo(f"PR comment {outcome.action}: {outcome.url}")
        return outcome.url or ""

    def record_pull_request(self) -> None:
        """Next to the results, which PR and commit they belong to: a `workflow_run` workflow that
        comments for fork PRs reads it back (and checks it against GitHub, see `recorded_pr_number`)."""
        pr = self.run.pull_request
        if pr is None or not self.paths.output_dir.is_dir():
            return
        record = {"number": pr.number, "head_sha": pr.head_sha, "repository": self.run.repository}
        (self.paths.output_dir / PR_RECORD).write_text(json.dumps(record) + "\n", encoding="utf-8")

    def recorded_pr_number(self) -> int | None:
        """The PR recorded with `results` (see `record_pull_request`), trusted only when GitHub confirms
        that this PR's head is the commit the triggering workflow run tested: the artifact comes from
        PR code and could name any PR."""
        record: dict[str, object] | None = None
        for text in self.inputs.results:
            path = Path(text) if Path(text).is_absolute() else self.workspace / text
            for candidate in sorted(path.parent.glob(path.name)) if _is_glob(text) else [path]:
                file = candidate / PR_RECORD
                if file.is_file():
                    try:
                        loaded = json.loads(file.read_text(encoding="utf-8"))
                    except (OSError, ValueError):
                        loaded = None
                    record = loaded if isinstance(loaded, dict) else None
                    break
            if record is not None:
                break
        number = record.get("number") if record else None
        if not isinstance(number, int) or isinstance(number, bool) or number < 1:
            self.notice("PR comment skipped: the results name no pull request (set `pr_number`)")
            return None
        workflow_run = self.run.payload.get("workflow_run")
        head_sha = workflow_run.get("head_sha") if isinstance(workflow_run, dict) else None
        if not isinstance(head_sha, str) or not head_sha:
            self.notice("PR comment skipped: a PR recorded in results is only trusted in a workflow_run")
            return None
        if not self.inputs.github_token or not self.run.repository:
            return number  # post_sticky_comment explains the missing token
        from agentv_ci.github.api import GitHubApiError, GitHubClient

        try:
            with GitHubClient(
                self.inputs.github_token, self.run.repository, api_url=self.run.api_url
            ) as client:
                pull = client.get_json(f"{client.repo_path}/pulls/{number}")
        except (GitHubApiError, ValueError) as exc:
            self.notice(f"PR comment skipped: cannot check pull request #{number}: {exc}")
            return None
        head = pull.get("head") if isinstance(pull, dict) else None
        if not isinstance(head, dict) or head.get("sha") != head_sha:
            self.notice(
                f"PR comment skipped: pull request #{number} is not the one the triggering run tested"
            )
            return None
        return number

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
        from agentv_ci.running.cache import DEFAULT_CACHE_DIR

        hand_over(
            [
                self.paths.output_dir,
                self.paths.junit,
                self.paths.sarif,
                self.workspace / DEFAULT_CACHE_DIR.parent,
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
            print(workflow_command("error", exc.message, title="agentv-ci"), flush=True)
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
