"""`history: N`: the last N complete results artifacts of the base branch, measured for flakiness.

Only artifacts of workflow runs on the base branch itself count (not the pull request's branch, not
a fork's branch of the same name, not a pull_request run: github/artifacts.py), so a pull request
cannot write its own history. History that cannot be had is a warning: without it, every failing
test blocks as it would have.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from pathlib import Path

from agentv_ci.action.log import ActionLog
from agentv_ci.github.event import WorkflowRun
from agentv_ci.github.inputs import ActionInputs
from agentv_ci.history.flakiness import measure_flakiness
from agentv_ci.history.flaky_waivers import with_flaky_waivers
from agentv_ci.model.result import TestResult
from agentv_ci.model.waivers import WaiverBook

__all__ = ["with_history"]


def with_history(
    inputs: ActionInputs,
    run: WorkflowRun,
    current: Iterable[TestResult],
    book: WaiverBook | None,
    log: ActionLog,
) -> WaiverBook | None:
    """`book` with the flaky waivers of the base branch's last `inputs.history` runs."""
    if inputs.history is None:
        return book
    # lazy: the GitHub API client (httpx) loaded only when `with_history` runs
    from agentv_ci.github.api import GitHubApiError, GitHubClient
    from agentv_ci.github.artifacts import DEFAULT_ARTIFACT_NAME, ArtifactLimits, download_runs

    if not inputs.github_token or not run.repository or not run.base_branch:
        log.warning("history: needs `github_token`, the repository and a base branch; not applied")
        return book
    name = inputs.baseline_artifact or DEFAULT_ARTIFACT_NAME
    limits = ArtifactLimits(max_candidates=2 * inputs.history)  # room for runs that are not complete
    with tempfile.TemporaryDirectory(prefix="agentv-ci-history-") as scratch:
        try:
            with GitHubClient(inputs.github_token, run.repository, api_url=run.api_url) as client:
                found = download_runs(
                    client, run.base_branch, inputs.history, Path(scratch), name=name, limits=limits
                )
        except (GitHubApiError, OSError, ValueError) as exc:
            log.warning(f"history: {exc}; not applied")
            return book
        for line in found.passed_over:
            log.warning(f"history: passed over {line}")
        if not found.runs:
            log.warning(f"history: {found.reason}; not applied")
            return book
        oldest_first = [r.summary.results for r in reversed(found.runs) if r.summary is not None]
        report = measure_flakiness(oldest_first)
    log.echo(f"history: {found.reason}")
    return with_flaky_waivers(book, report, current, f"on {run.base_branch}")
