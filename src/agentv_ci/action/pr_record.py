"""Which pull request a results directory belongs to, for the `workflow_run` comment on fork PRs.

A `pull_request` run writes `pull_request.json` next to its `index.jsonl`. A later, trusted
`workflow_run` workflow reports those results (`results:` input) and comments on that PR, but only
after GitHub confirms that the PR's head is the commit the triggering run tested: the artifact was
produced by PR code and could name any PR.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from agentv_ci.github.event import WorkflowRun

PR_RECORD = "pull_request.json"


def is_glob(text: str) -> bool:
    return any(ch in text for ch in "*?[")


def expand_results(texts: Sequence[str], workspace: Path) -> list[Path]:
    """The `results:` inputs as paths (relative to the workspace; a glob in the last part expanded)."""
    paths: list[Path] = []
    for text in texts:
        path = Path(text) if Path(text).is_absolute() else workspace / text
        paths += sorted(p for p in path.parent.glob(path.name) if p.exists()) if is_glob(text) else [path]
    return paths


def write_pr_record(run: WorkflowRun, output_dir: Path) -> None:
    """Record the run's PR and head commit next to its results (nothing outside pull requests)."""
    pr = run.pull_request
    if pr is None or not output_dir.is_dir():
        return
    record = {"number": pr.number, "head_sha": pr.head_sha, "repository": run.repository}
    (output_dir / PR_RECORD).write_text(json.dumps(record) + "\n", encoding="utf-8")


def _recorded_number(results: Sequence[Path]) -> int | None:
    for directory in results:
        file = directory / PR_RECORD
        if not file.is_file():
            continue
        try:
            loaded = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            return None
        number = loaded.get("number") if isinstance(loaded, dict) else None
        valid = isinstance(number, int) and not isinstance(number, bool) and number > 0
        return number if valid else None
    return None


def trusted_pr_number(
    results: Sequence[Path], run: WorkflowRun, token: str | None
) -> tuple[int | None, str | None]:
    """(the PR to comment on, None) or (None, why not). Trusted only in a `workflow_run` whose
    `head_sha` is the head of the recorded PR, as the API says."""
    number = _recorded_number(results)
    if number is None:
        return None, "PR comment skipped: the results name no pull request (set `pr_number`)"
    workflow_run = run.payload.get("workflow_run")
    head_sha = workflow_run.get("head_sha") if isinstance(workflow_run, dict) else None
    if not isinstance(head_sha, str) or not head_sha:
        return None, "PR comment skipped: a PR recorded in results is only trusted in a workflow_run"
    if not token or not run.repository:
        return number, None  # post_sticky_comment explains the missing token
    # lazy: the GitHub API client (httpx) loaded only when `trusted_pr_number` runs
    from agentv_ci.github.api import GitHubApiError, GitHubClient

    try:
        with GitHubClient(token, run.repository, api_url=run.api_url) as client:
            pull = client.get_json(f"{client.repo_path}/pulls/{number}")
    except (GitHubApiError, ValueError) as exc:
        return None, f"PR comment skipped: cannot check pull request #{number}: {exc}"
    head = pull.get("head") if isinstance(pull, dict) else None
    if not isinstance(head, dict) or head.get("sha") != head_sha:
        return None, f"PR comment skipped: pull request #{number} is not the one the triggering run tested"
    return number, None
