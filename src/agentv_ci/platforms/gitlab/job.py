"""The GitLab CI job `agentv-ci gitlab` runs in, from GitLab's predefined variables.

A merge-request pipeline (`CI_PIPELINE_SOURCE=merge_request_event`) has the changed range
`CI_MERGE_REQUEST_DIFF_BASE_SHA`..`CI_COMMIT_SHA`. Its MR comes from a fork when its source project
(`CI_MERGE_REQUEST_SOURCE_PROJECT_ID`) is not the MR's project (`CI_MERGE_REQUEST_PROJECT_ID`). By
default such a pipeline runs in the fork's project, with none of the parent's variables: GitHub's
`pull_request` from a fork. A parent maintainer may run it in the parent project instead
(`CI_PROJECT_ID` is the parent's): then the fork's code runs with the parent's variables, GitHub's
`pull_request_target`, which the step refuses unless `trust_fork_code` (platforms/gitlab/platform.py).
The shared pipeline sees the job as a `WorkflowRun` of those trust models, so selection, fork
secrets, the cache's fork stamp and the refusal rules are the Action's own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agentv_ci.github.event import PullRequest, WorkflowRun

__all__ = ["GitLabJob", "read_gitlab_job"]

_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
_ID = re.compile(r"^[0-9]{1,18}$")


@dataclass(frozen=True)
class GitLabJob:
    """The predefined variables the step uses (empty when GitLab did not set them)."""

    pipeline_source: str = ""
    project_id: str = ""
    project_path: str = ""
    project_url: str = ""
    project_dir: str = ""
    api_url: str = "https://gitlab.com/api/v4"
    server_url: str = "https://gitlab.com"
    commit_sha: str = ""
    commit_branch: str = ""
    default_branch: str = ""
    pipeline_id: str = ""
    pipeline_url: str = ""
    job_name: str = ""
    job_url: str = ""
    job_token: str = ""
    mr_iid: int | None = None
    mr_project_id: str = ""
    mr_project_url: str = ""
    mr_source_project_id: str = ""
    mr_target_branch: str = ""
    mr_diff_base_sha: str = ""

    @property
    def is_merge_request(self) -> bool:
        return self.pipeline_source == "merge_request_event" and self.mr_iid is not None

    @property
    def from_fork(self) -> bool:
        """The MR's source project is not its target project (or GitLab did not say which it is)."""
        if not self.is_merge_request:
            return False
        return not self.mr_source_project_id or self.mr_source_project_id != self.mr_project_id

    @property
    def fork_in_parent(self) -> bool:
        """A fork's MR whose pipeline runs in the parent project, with the parent's variables."""
        return self.from_fork and bool(self.project_id) and self.project_id == self.mr_project_id

    @property
    def target_project_id(self) -> str:
        """The project the MR (or the branch pipeline) belongs to: notes and baselines live there."""
        return self.mr_project_id if self.is_merge_request and self.mr_project_id else self.project_id

    @property
    def base_branch(self) -> str:
        """The branch baselines come from: the MR's target, else the branch this pipeline is on."""
        if self.is_merge_request:
            return self.mr_target_branch
        return self.commit_branch or self.default_branch

    @property
    def mr_url(self) -> str:
        web = self.mr_project_url or self.project_url
        return f"{web.rstrip('/')}/-/merge_requests/{self.mr_iid}" if web and self.mr_iid else ""

    def workflow_run(self) -> WorkflowRun:
        """The job in the shared pipeline's terms (see the module docstring)."""
        pull_request = None
        event = "push" if self.commit_branch else (self.pipeline_source or "gitlab")
        if self.is_merge_request and self.mr_iid is not None:
            source = self.mr_source_project_id
            pull_request = PullRequest(
                number=self.mr_iid,
                base_sha=self.mr_diff_base_sha,
                base_ref=self.mr_target_branch,
                head_sha=self.commit_sha,
                # an unnamed source project counts as a fork, as a deleted fork does on GitHub
                head_repo=f"project {source}" if source else "(unknown source project)",
                base_repo=f"project {self.mr_project_id}",
            )
            event = "pull_request_target" if self.fork_in_parent else "pull_request"
        return WorkflowRun(
            event_name=event,
            repository=self.project_path,
            workspace=Path(self.project_dir) if self.project_dir else None,
            api_url=self.api_url,
            server_url=self.server_url,
            run_id=self.pipeline_id,
            workflow=f"gitlab/{self.job_name or 'agentv-ci'}",
            job=self.job_name,
            sha=self.commit_sha,
            ref_name=self.commit_branch,
            base_ref=self.mr_target_branch,
            pull_request=pull_request,
            payload={"repository": {"default_branch": self.default_branch}},
        )


def _sha(value: str) -> str:
    text = value.strip().lower()
    return text if _SHA.match(text) else ""


def _id(value: str) -> str:
    text = value.strip()
    return text if _ID.match(text) else ""


def _iid(value: str) -> int | None:
    text = value.strip()
    return int(text) if _ID.match(text) and int(text) > 0 else None


def read_gitlab_job(env: Mapping[str, str]) -> GitLabJob:
    """The job, from `env`. Values that are not what GitLab sets (a SHA that is not hex, an id that
    is not a number) are treated as unset, so they never reach a git command or an API path."""

    def text(name: str) -> str:
        return env.get(name, "").strip()

    return GitLabJob(
        pipeline_source=text("CI_PIPELINE_SOURCE"),
        project_id=_id(text("CI_PROJECT_ID")),
        project_path=text("CI_PROJECT_PATH"),
        project_url=text("CI_PROJECT_URL"),
        project_dir=text("CI_PROJECT_DIR"),
        api_url=text("CI_API_V4_URL") or "https://gitlab.com/api/v4",
        server_url=text("CI_SERVER_URL") or "https://gitlab.com",
        commit_sha=_sha(text("CI_COMMIT_SHA")),
        commit_branch=text("CI_COMMIT_BRANCH"),
        default_branch=text("CI_DEFAULT_BRANCH"),
        pipeline_id=_id(text("CI_PIPELINE_ID")),
        pipeline_url=text("CI_PIPELINE_URL"),
        job_name=text("CI_JOB_NAME"),
        job_url=text("CI_JOB_URL"),
        job_token=text("CI_JOB_TOKEN"),
        mr_iid=_iid(text("CI_MERGE_REQUEST_IID")),
        mr_project_id=_id(text("CI_MERGE_REQUEST_PROJECT_ID")),
        mr_project_url=text("CI_MERGE_REQUEST_PROJECT_URL"),
        mr_source_project_id=_id(text("CI_MERGE_REQUEST_SOURCE_PROJECT_ID")),
        mr_target_branch=text("CI_MERGE_REQUEST_TARGET_BRANCH_NAME"),
        mr_diff_base_sha=_sha(text("CI_MERGE_REQUEST_DIFF_BASE_SHA")),
    )
