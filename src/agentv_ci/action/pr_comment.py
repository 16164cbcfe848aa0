"""The Action's comment step: which PR, which marker, which body, then the sticky upsert."""

from __future__ import annotations

from pathlib import Path

from agentv_ci.action.pr_record import expand_results, trusted_pr_number
from agentv_ci.gating import GateDecision
from agentv_ci.github.event import WorkflowRun
from agentv_ci.github.inputs import ActionInputs
from agentv_ci.model.result import RunSummary


def pr_to_comment(inputs: ActionInputs, run: WorkflowRun, workspace: Path) -> tuple[int | None, str | None]:
    """(the PR number, None), or (None, a notice saying why there is none; None: nothing to say)."""
    if not inputs.comment:
        return None, None
    if inputs.pr_number is not None:
        return inputs.pr_number, None
    if run.pull_request is not None:
        return run.pull_request.number, None
    if not inputs.results:
        return None, None  # push, schedule, dispatch: nothing to comment on
    return trusted_pr_number(expand_results(inputs.results, workspace), run, inputs.github_token)


def post_comment(
    inputs: ActionInputs,
    run: WorkflowRun,
    number: int,
    *,
    summary: RunSummary,
    decision: GateDecision,
    baseline: RunSummary | None,
    workspace: Path,
    note: str | None = None,
    html_report: bool = False,
) -> tuple[str, str]:
    """Create or update the sticky comment on PR `number`: (its URL or "", a line for the log).
    `html_report`: the step wrote the HTML report, so the comment links the run's artifacts. A `note`
    (nothing ran) only updates an earlier comment: it replaces a stale verdict, and a PR that never
    had a comment is not given one to say nothing happened."""
    # lazy: the PR comment client (httpx) loaded only when `post_comment` runs
    from agentv_ci.github.comment import (
        comment_marker,
        marker_key,
        post_sticky_comment,
        render_comment,
        render_note_comment,
    )

    key = run.workflow + (f"/{inputs.comment_key}" if inputs.comment_key else "")
    marker = comment_marker(marker_key(key, inputs.paths))
    if note is not None:
        body = render_note_comment(note, run_url=run.run_url, marker=marker)
    else:
        body = render_comment(
            summary,
            decision,
            baseline=baseline,
            repo_root=workspace,
            run_url=run.run_url,
            marker=marker,
            html_report_url=run.artifacts_url if html_report else None,
        )
    outcome = post_sticky_comment(
        token=inputs.github_token,
        repository=run.repository,
        body=body,
        marker=marker,
        event=run.payload,
        event_name=run.event_name,
        pr_number=number,
        api_url=run.api_url,
        create=note is None,
    )
    if outcome.action == "skipped":
        return "", outcome.reason or "PR comment skipped"
    return outcome.url or "", f"PR comment {outcome.action}: {outcome.url}"
