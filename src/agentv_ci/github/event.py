"""The workflow run the Action is in: `GITHUB_*` variables and the event payload at `GITHUB_EVENT_PATH`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentv_ci.errors import UsageError
from agentv_ci.json_limits import MAX_JSON_DEPTH, too_deep

PULL_REQUEST_EVENTS = frozenset({"pull_request", "pull_request_target"})
# Events whose job gets this repository's secrets and write token although an outsider can trigger
# them (a fork's PR, a comment, an issue): only the base's own code may run there (action/fork_code.py).
SECRET_EVENTS_OUTSIDERS_TRIGGER = frozenset(
    {"pull_request_target", "workflow_run", "issue_comment", "issues", "discussion", "discussion_comment"}
)


@dataclass(frozen=True)
class PullRequest:
    """The parts of `pull_request` in the event payload the Action uses."""

    number: int
    base_sha: str
    base_ref: str
    head_sha: str
    head_repo: str
    base_repo: str

    @property
    def is_fork(self) -> bool:
        """A PR from another repository: its token is read-only and secrets are withheld."""
        return bool(self.head_repo) and self.head_repo != self.base_repo

    @property
    def same_repository(self) -> bool:
        """The event says positively that the PR's head branch is in the base repository (pushed by
        someone with write access); a missing or deleted head repository is not."""
        return bool(self.head_repo) and self.head_repo == self.base_repo


@dataclass(frozen=True)
class WorkflowRun:
    """What GitHub tells a step about the run it belongs to."""

    event_name: str = ""
    repository: str = ""  # owner/name
    workspace: Path | None = None
    api_url: str = "https://api.github.com"
    server_url: str = "https://github.com"
    run_id: str = ""
    run_attempt: str = ""
    workflow: str = ""
    job: str = ""
    sha: str = ""
    ref_name: str = ""
    base_ref: str = ""  # GITHUB_BASE_REF: the PR's base branch name on pull_request events
    pull_request: PullRequest | None = None
    payload: Mapping[str, Any] = field(default_factory=dict)

    @property
    def is_pull_request(self) -> bool:
        return self.event_name in PULL_REQUEST_EVENTS and self.pull_request is not None

    @property
    def secrets_withheld(self) -> bool:
        """A fork's `pull_request` (or one whose head repository is gone or unnamed): GitHub gives its
        job no secrets, so a target's missing API key says nothing about the workflow."""
        pr = self.pull_request
        return self.event_name == "pull_request" and pr is not None and not pr.same_repository

    @property
    def run_url(self) -> str | None:
        """The link to this workflow run's page, when GitHub said which run this is."""
        if not (self.repository and self.run_id):
            return None
        url = f"{self.server_url.rstrip('/')}/{self.repository}/actions/runs/{self.run_id}"
        return f"{url}/attempts/{self.run_attempt}" if self.run_attempt not in ("", "1") else url

    @property
    def artifacts_url(self) -> str | None:
        """The artifacts section of this workflow run's page (where a later step's uploads appear)."""
        if not (self.repository and self.run_id):
            return None
        return f"{self.server_url.rstrip('/')}/{self.repository}/actions/runs/{self.run_id}#artifacts"

    @property
    def default_branch(self) -> str:
        """The repository's default branch, as the event payload names it ("" when it does not)."""
        repository = self.payload.get("repository")
        return _text(repository.get("default_branch")) if isinstance(repository, dict) else ""

    @property
    def base_branch(self) -> str:
        """The branch baselines come from: the PR's base, else the branch this run is on."""
        if self.pull_request is not None and self.pull_request.base_ref:
            return self.pull_request.base_ref
        return self.base_ref or self.ref_name


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _pull_request(payload: Mapping[str, Any]) -> PullRequest | None:
    pr = payload.get("pull_request")
    if not isinstance(pr, dict):
        return None
    base = _mapping(pr.get("base"))
    head = _mapping(pr.get("head"))
    number = pr.get("number", payload.get("number"))
    if not isinstance(number, int) or isinstance(number, bool):
        return None

    def repo_name(side: Mapping[str, Any]) -> str:
        repo = side.get("repo")
        return _text(repo.get("full_name")) if isinstance(repo, dict) else ""

    base_repo = repo_name(base)
    if not base_repo:
        repository = payload.get("repository")
        base_repo = _text(repository.get("full_name")) if isinstance(repository, dict) else ""
    return PullRequest(
        number=number,
        base_sha=_text(base.get("sha")),
        base_ref=_text(base.get("ref")),
        head_sha=_text(head.get("sha")),
        # A deleted fork has `head.repo: null`: treat it as a fork (no write token either way).
        head_repo=repo_name(head) or ("(deleted fork)" if "repo" in head else ""),
        base_repo=base_repo,
    )


def read_event_payload(path: Path) -> dict[str, Any]:
    """The event JSON; a missing or broken file is bad input with the path named."""
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read the event payload {path}: {exc.strerror or exc}") from None
    if too_deep(text) is not None:
        raise UsageError(f"the event payload {path} is nested more than {MAX_JSON_DEPTH} levels deep")
    try:
        data = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"the event payload {path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise UsageError(f"the event payload {path} must be a JSON object")
    return data


def read_workflow_run(env: Mapping[str, str]) -> WorkflowRun:
    """Everything the Action needs to know about its run, from the environment GitHub sets."""
    event_path = env.get("GITHUB_EVENT_PATH", "")
    payload: dict[str, Any] = read_event_payload(Path(event_path)) if event_path else {}
    workspace = env.get("GITHUB_WORKSPACE", "")
    return WorkflowRun(
        event_name=env.get("GITHUB_EVENT_NAME", ""),
        repository=env.get("GITHUB_REPOSITORY", ""),
        workspace=Path(workspace) if workspace else None,
        api_url=env.get("GITHUB_API_URL") or "https://api.github.com",
        server_url=env.get("GITHUB_SERVER_URL") or "https://github.com",
        run_id=env.get("GITHUB_RUN_ID", ""),
        run_attempt=env.get("GITHUB_RUN_ATTEMPT", ""),
        workflow=env.get("GITHUB_WORKFLOW", ""),
        job=env.get("GITHUB_JOB", ""),
        sha=env.get("GITHUB_SHA", ""),
        ref_name=env.get("GITHUB_REF_NAME", ""),
        base_ref=env.get("GITHUB_BASE_REF", ""),
        pull_request=_pull_request(payload),
        payload=payload,
    )
