"""Refusing a "pwn request", by proof rather than by absence.

On events that hand the job this repository's secrets and write token although an outsider can
trigger them (`pull_request_target`, `workflow_run`, `issue_comment`, ...), the eval files would run
code graders, hooks and agents with those secrets. So the Action runs them only when the checkout is
positively the base repository's code: HEAD is `GITHUB_SHA` (on these events, a commit of the base
branch or the default branch), the event's base commit, or a commit of the default branch (an
ancestor of `origin/<default branch>` when `origin` is this repository); no tracked file differs
from HEAD; and every eval file under `paths` is a file committed in that checkout (not an untracked
copy, another clone inside it, or a symlink out of it). Anything else (a fork's head, the
`refs/pull/N/merge` commit, a head force-pushed after the event, a tree without git) is refused with
exit 2, unless the `trust_fork_code` input says otherwise. A same-repository PR (or a `workflow_run`
of a same-repository run) is code pushed by someone with write access, and is not checked.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

from agentv_ci.errors import UsageError
from agentv_ci.github.event import SECRET_EVENTS_OUTSIDERS_TRIGGER, WorkflowRun
from agentv_ci.security.confinement import real_path

FORK_SAFE_WORKFLOWS = "examples/workflows/evals-pr.yml and examples/workflows/evals-fork-comment.yml"
_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


def _git(workspace: Path, *args: str) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(
            ["git", "-C", str(workspace), *args], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.SubprocessError):
        return None


def _out(workspace: Path, *args: str) -> str | None:
    done = _git(workspace, *args)
    return done.stdout.strip() if done is not None and done.returncode == 0 else None


def _text(mapping: object, *keys: str) -> str:
    value = mapping
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, str) else ""


def _trusted_code_by_event(run: WorkflowRun) -> bool:
    """True when the event itself says the code comes from this repository's own branches."""
    if run.pull_request is not None and run.event_name == "pull_request_target":
        return run.pull_request.same_repository
    if run.event_name == "workflow_run":
        head = _text(run.payload, "workflow_run", "head_repository", "full_name")
        base = run.repository or _text(run.payload, "repository", "full_name")
        return bool(head) and head.lower() == base.lower()
    return False


def _origin_is_base(workspace: Path, run: WorkflowRun) -> bool:
    """`origin` points to this repository on this server (so its branches are the base's)."""
    url = _out(workspace, "remote", "get-url", "origin")
    repository = run.repository or _text(run.payload, "repository", "full_name")
    if not url or not repository:
        return False
    match = re.match(r"^[\w.-]+@([^:/]+):(.+)$", url)  # git@host:owner/name
    host, path = (
        (match.group(1), match.group(2)) if match else (urlsplit(url).hostname or "", urlsplit(url).path)
    )
    path = path.strip("/").removesuffix(".git")
    server = urlsplit(run.server_url).hostname or ""
    return host.lower() == server.lower() and path.lower() == repository.lower()


def _proof(run: WorkflowRun, workspace: Path, head: str) -> str | None:
    """Why HEAD is the base's code, or None when nothing proves it."""
    known = {
        "GITHUB_SHA": run.sha.lower(),
        "the event's base commit": run.pull_request.base_sha.lower() if run.pull_request else "",
    }
    for name, sha in known.items():
        if sha and _SHA.match(sha) and sha == head:
            return name
    default = run.default_branch
    if default and _origin_is_base(workspace, run):
        ref = f"refs/remotes/origin/{default}"
        done = _git(workspace, "merge-base", "--is-ancestor", head, ref)
        if done is not None and done.returncode == 0:
            return f"a commit of the default branch ({ref})"
    return None


def _refusal(run: WorkflowRun, why: str) -> UsageError:
    pr = run.pull_request
    whose = f" of {pr.head_repo}'s pull request #{pr.number}" if pr is not None and pr.head_repo else ""
    return UsageError(
        f"refusing to run the eval files{whose} on {run.event_name}: {why}; on this event they would "
        "run with this repository's secrets and write token, so the checkout must be the base's code "
        "(HEAD = GITHUB_SHA, the event's base commit, or a commit of the default branch)",
        hint=f"use the fork-safe workflows {FORK_SAFE_WORKFLOWS} (run PRs on `pull_request`, which "
        "gets no secrets, and comment from `workflow_run` with `results:`); or set "
        "`trust_fork_code: true` if you reviewed this exact commit (see docs/security.md)",
    )


def _untracked_eval_file(workspace: Path, top: str, paths: Sequence[Path]) -> Path | None:
    """The first eval file under `paths` that is not a file committed in the checkout at `top` (an
    untracked copy, another clone inside it, a symlink out of it)."""
    # lazy: `loading.discovery` loaded only when `_untracked_eval_file` runs
    from agentv_ci.loading.discovery import find_eval_files

    listed = _git(workspace, "-c", "core.quotepath=off", "ls-files", "-z", "--full-name", ":/")
    tracked = set(listed.stdout.split("\0")) if listed is not None and listed.returncode == 0 else set()
    root = Path(top)
    for path in find_eval_files(paths):
        if not path.exists():
            continue  # a missing path is reported by the run itself
        real = real_path(path)
        if not real.is_relative_to(root) or real.relative_to(root).as_posix() not in tracked:
            return path
    return None


def refuse_fork_code_with_secrets(
    run: WorkflowRun, workspace: Path, *, trusted: bool, paths: Sequence[Path] = ()
) -> None:
    """Raise `UsageError` (exit 2) on an event with the base's secrets when the checkout is not
    proven to be the base's code, unless `trusted` (the `trust_fork_code` input)."""
    if trusted or run.event_name not in SECRET_EVENTS_OUTSIDERS_TRIGGER or _trusted_code_by_event(run):
        return
    head = (_out(workspace, "rev-parse", "--verify", "HEAD^{commit}") or "").lower()
    if not head:
        raise _refusal(run, f"the workspace {workspace} is not a git checkout, so its code is unproven")
    if _proof(run, workspace, head) is None:
        raise _refusal(run, f"the checkout's HEAD {head[:12]} is not this repository's code")
    changed = _git(workspace, "diff", "--quiet", "HEAD", "--")
    if changed is None or changed.returncode != 0:
        raise _refusal(run, f"tracked files differ from HEAD {head[:12]}")
    top = _out(workspace, "rev-parse", "--show-toplevel")
    untracked = _untracked_eval_file(workspace, top, paths) if top else None
    if untracked is not None:
        raise _refusal(run, f"{untracked} is not a file of the checkout at {head[:12]}")
