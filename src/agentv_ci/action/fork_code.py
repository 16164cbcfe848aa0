"""Refusing a "pwn request": on `pull_request_target` the job has the base repository's secrets and
a write token, so a checkout that contains a fork's commits would run the fork's code graders, hooks
and agents with them. The Action refuses unless the `trust_fork_code` input says otherwise."""

from __future__ import annotations

import subprocess
from pathlib import Path

from agentv_ci.errors import UsageError
from agentv_ci.github.event import WorkflowRun


def checkout_contains(workspace: Path, commit: str) -> bool:
    """True when `commit` is HEAD or an ancestor of it (a commit git does not have: False)."""
    if not commit:
        return False
    try:
        done = subprocess.run(
            ["git", "-C", str(workspace), "merge-base", "--is-ancestor", commit, "HEAD"],
            capture_output=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def refuse_fork_code_with_secrets(run: WorkflowRun, workspace: Path, *, trusted: bool) -> None:
    """Raise `UsageError` (exit 2) on a `pull_request_target` run from a fork whose head commit is
    checked out (directly or merged), unless `trusted`."""
    pr = run.pull_request
    if trusted or run.event_name != "pull_request_target" or pr is None or not pr.is_fork:
        return
    if checkout_contains(workspace, pr.head_sha):
        raise UsageError(
            f"refusing to run the eval files of fork {pr.head_repo} on pull_request_target: they would "
            "run with this repository's secrets and write token",
            hint="run fork PRs on `pull_request` (no secrets) and comment from a `workflow_run` with "
            "`results:`; or set `trust_fork_code: true` if you reviewed this PR (see docs/security.md)",
        )
