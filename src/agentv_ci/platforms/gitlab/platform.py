"""A GitLab CI job's platform (see platforms/contract.py): the merge request's note, the dotenv
outputs, the Code Quality and metrics reports, the target branch's job artifacts as the baseline
and (`history: N`) its last N successful pipelines' as the flakiness history, and collapsible log
sections.

The API token is `AGENTV_CI_GITLAB_TOKEN` (a project access token with `api` scope: `CI_JOB_TOKEN`
cannot write notes). Without it there is no note, one line says so, and everything else runs as
usual; `baseline: auto` then downloads with `CI_JOB_TOKEN`, which may read the project's artifacts.
A fork's MR pipeline in the fork's project writes no note (it has no parent token to write with);
one run in the parent project runs the fork's code with the parent's variables, and is refused
before anything runs unless `trust_fork_code` (GitHub's rule for `pull_request_target`).
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from agentv_ci.action.baseline import Baseline, missing_baseline
from agentv_ci.action.log import ActionLog
from agentv_ci.errors import UsageError
from agentv_ci.gating import GateDecision
from agentv_ci.github.api import GitHubApiError
from agentv_ci.github.artifacts import ArtifactLimits
from agentv_ci.history.flakiness import measure_flakiness
from agentv_ci.history.flaky_waivers import with_flaky_waivers
from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.model.waivers import WaiverBook
from agentv_ci.platforms.contract import StepBasis
from agentv_ci.platforms.gitlab.artifacts import download_job_baseline
from agentv_ci.platforms.gitlab.client import GitLabClient, TokenKind, describe
from agentv_ci.platforms.gitlab.job import GitLabJob, read_gitlab_job
from agentv_ci.platforms.gitlab.log import log_section
from agentv_ci.platforms.gitlab.pipeline_history import download_pipeline_runs
from agentv_ci.platforms.gitlab.settings import read_settings
from agentv_ci.security.redaction import redact, register_secret

__all__ = ["OUTPUTS_FILE", "TOKEN_VARIABLE", "GitLabPlatform"]

TOKEN_VARIABLE = "AGENTV_CI_GITLAB_TOKEN"
OUTPUTS_FILE = "agentv-ci.env"  # for `artifacts:reports:dotenv`
_NOT_IN_VALUE = re.compile(r"[\x00-\x1f\x7f]+")
_URL = re.compile(r"https?://[^\s()<>\[\]`\"'\\]{1,500}")


class GitLabPlatform(StepBasis):
    """A step of a GitLab CI job."""

    name = "gitlab"

    def __init__(self, env: Mapping[str, str], log: ActionLog, args: Sequence[str] = ()) -> None:
        self.job: GitLabJob = read_gitlab_job(env)
        inputs = read_settings(args, env, job_name=self.job.job_name)  # bad settings first, as before
        super().__init__(self.job.workflow_run(), inputs)
        self.env = env
        self.log = log
        self.token = env.get(TOKEN_VARIABLE, "").strip()
        for secret in (self.token, self.job.job_token):
            if secret:
                register_secret(secret)  # never printed, redacted from every report and the note
        self._outputs: dict[str, str] = {}

    def refuse_fork_in_parent(self) -> None:
        """Raise `UsageError` (exit 2) for a fork's MR pipeline in the parent project, unless
        `trust_fork_code`: the fork's code would run with the parent's variables."""
        if not self.job.fork_in_parent or self._inputs.trust_fork_code:
            return
        raise UsageError(
            f"refusing to run the eval files of merge request !{self.job.mr_iid}: it comes from a fork "
            f"(project {self.job.mr_source_project_id or '?'}) and this pipeline runs in the parent "
            "project, with its CI/CD variables; the fork's code (code graders, hooks, agents) would run "
            "with them",
            hint="let the fork's pipeline run in the fork's project (the default: no secrets, tests that "
            "need one are reported as not run), or set `--trust-fork-code` (AGENTV_CI_TRUST_FORK_CODE) "
            "if you reviewed this exact commit (see docs/gitlab.md)",
        )

    def _client(self, kind: TokenKind | None = None) -> GitLabClient | None:
        project = self.job.target_project_id
        if not project:
            return None
        if kind in (None, "private") and self.token:
            return GitLabClient(self.token, project, api_url=self.job.api_url, kind="private")
        if kind in (None, "job") and self.job.job_token:
            return GitLabClient(self.job.job_token, project, api_url=self.job.api_url, kind="job")
        return None

    def default_reports(self, output_dir: Path) -> list[tuple[str, Path]]:
        return [
            ("gitlab-codequality", output_dir / "gl-code-quality-report.json"),
            ("openmetrics", output_dir / "metrics.txt"),
        ]

    def annotate(self, summary: RunSummary, decision: GateDecision) -> None:
        return None  # GitLab marks failing tests on the diff from the Code Quality report

    def append_summary(self, text: str) -> None:
        return None  # no job summary page: summary.md is in the results directory

    def _why_no_note(self) -> str | None:
        if not self._inputs.comment:
            return None
        if not self.job.is_merge_request:
            return "" if self._inputs.results else None  # a branch pipeline has no MR to write on
        if self.job.from_fork and not self.job.fork_in_parent:
            return (
                "MR note skipped: the merge request comes from a fork; its pipeline has none of the "
                "parent's variables"
            )
        if not self.token:
            return (
                f"MR note skipped: no {TOKEN_VARIABLE} (a project access token with `api` scope; "
                "CI_JOB_TOKEN cannot write notes)"
            )
        if not self.job.target_project_id:
            return "MR note skipped: GitLab did not say which project the merge request is in"
        return None

    def comment(
        self,
        summary: RunSummary,
        decision: GateDecision,
        baseline: RunSummary | None,
        *,
        note: str | None,
        html_report: bool,
    ) -> str:
        # lazy: the PR comment client (httpx), `platforms.gitlab.note` loaded only when `comment` runs
        from agentv_ci.github.comment import comment_marker, marker_key
        from agentv_ci.platforms.gitlab.note import render_mr_note, upsert_note

        why_not = self._why_no_note()
        if why_not is not None or self.job.mr_iid is None:
            if why_not:
                self.log.echo(why_not)
            return ""
        key = self._run.workflow + (f"/{self._inputs.comment_key}" if self._inputs.comment_key else "")
        marker = comment_marker(marker_key(key, self._inputs.paths))
        pipeline_url = self.job.pipeline_url if _URL.fullmatch(self.job.pipeline_url) else None
        body = render_mr_note(
            summary,
            decision,
            baseline=baseline,
            repo_root=self.workspace,
            pipeline_url=pipeline_url,
            marker=marker,
            note=note,
        )
        client = self._client("private")
        assert client is not None  # _why_no_note checked the token and the project
        try:
            with client:
                outcome = upsert_note(client, self.job.mr_iid, body, marker, create=note is None)
        except GitHubApiError as exc:
            self.log.warning(f"MR note not written: {describe(exc)}")
            return ""
        if outcome.action == "skipped":
            return ""
        url = f"{self.job.mr_url}#note_{outcome.id}" if self.job.mr_url and outcome.id else ""
        self.log.echo(f"MR note {outcome.action}: {url or f'note {outcome.id}'}")
        return url

    def write_outputs(self, values: Mapping[str, str]) -> bool:
        """Write `AGENTV_CI_<NAME>=value` lines to `<output_dir>/agentv-ci.env`, for
        `artifacts:reports:dotenv`: the file is this step's alone (a name set again replaces its value:
        GitLab refuses a file naming a variable twice), one line each (control characters become
        spaces), redacted."""
        directory = Path(self._inputs.output_dir or ".agentv-ci/results")
        path = directory if directory.is_absolute() else self.workspace / directory
        self._outputs.update(values)
        lines = [
            f"AGENTV_CI_{name.upper()}={_NOT_IN_VALUE.sub(' ', value).strip()}\n"
            for name, value in self._outputs.items()
        ]
        try:
            path.mkdir(parents=True, exist_ok=True)
            (path / OUTPUTS_FILE).write_text(redact("".join(lines)), encoding="utf-8")
        except OSError:
            return False
        return True

    def artifact_baseline(self) -> Baseline:

        branch, job = self.job.base_branch, self._inputs.baseline_artifact or self.job.job_name
        if not branch or not job:
            return missing_baseline("baseline: auto needs the target branch and the job name (CI_JOB_NAME)")
        client = self._client()
        if client is None:
            return missing_baseline(
                f"baseline: auto needs {TOKEN_VARIABLE} or CI_JOB_TOKEN and CI_PROJECT_ID"
            )
        web = self.job.mr_project_url or self.job.project_url
        try:
            with client:
                return download_job_baseline(client, branch, job, web_url=web)
        except (OSError, ValueError) as exc:
            return missing_baseline(f"baseline: auto: {exc}")

    def flaky_history(self, current: Iterable[TestResult], book: WaiverBook | None) -> WaiverBook | None:
        """`book` with the flaky waivers of job `baseline_artifact`'s (default: this job's) results in
        the target branch's last `history` successful pipelines (platforms/gitlab/pipeline_history.py).
        Without them: one warning, no waivers (every failing test blocks as it would have)."""
        count = self._inputs.history
        if count is None:
            return book
        branch = (self.job.mr_target_branch if self.job.is_merge_request else "") or self.job.default_branch
        job = self._inputs.baseline_artifact or self.job.job_name
        client = self._client()
        if not branch or not job or client is None:
            self.log.warning(
                "history: needs the target branch, the job name (CI_JOB_NAME), CI_PROJECT_ID and "
                f"{TOKEN_VARIABLE} or CI_JOB_TOKEN; not applied"
            )
            return book
        limits = ArtifactLimits(max_candidates=2 * count)  # room for pipelines without a complete run
        with tempfile.TemporaryDirectory(prefix="agentv-ci-gitlab-history-") as scratch:
            try:
                with client:
                    found = download_pipeline_runs(client, branch, job, count, Path(scratch), limits)
            except GitHubApiError as exc:
                self.log.warning(f"history: {describe(exc)}; not applied")
                return book
            except (OSError, ValueError) as exc:
                self.log.warning(f"history: {exc}; not applied")
                return book
            for line in found.passed_over:
                self.log.echo(f"history: passed over {line}")
            if not found.runs:
                self.log.warning(f"history: {found.reason}; not applied")
                return book
            report = measure_flakiness(r.summary.results for r in reversed(found.runs) if r.summary)
        self.log.echo(f"history: {found.reason}")
        return with_flaky_waivers(book, report, current, f"on {branch}")

    @contextmanager
    def section(self, name: str, header: str) -> Iterator[None]:
        with log_section(name, header, collapsed=False):
            yield
