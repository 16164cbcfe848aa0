"""`baseline: auto`: the newest complete results artifact of the base branch, downloaded and checked.

Candidates are the artifacts named `name` (default `agentv-ci-results`) that have not expired and
were made by a run on the base branch of this repository itself (a fork's branch of the same name
does not count), newest first. For each, at most `max_candidates` of them:
1. the run must have finished (`success`, or `failure`: a failed eval gate still leaves complete
   results; cancelled, timed-out and unfinished runs do not count) and not be a pull-request run;
2. the zip is downloaded (GitHub redirects to a storage host; the token is not sent there) and
   extracted safely (see `safe_unzip`);
3. the directory holding `index.jsonl` must also hold `summary.json` of a complete run: not
   interrupted, nothing left unrun, budget not exhausted, not a dry run, at least one result.
The first candidate that passes is the baseline; otherwise there is none, with the reasons why
(`download_runs`: the newest N that pass, the history `history: N` measures flakiness on).
Each download has the client's wall-clock deadline (120 s), and no candidate is started after the
search has taken `max_seconds` (300 s), so a storage host that drips bytes cannot stall the Action.
Nothing here raises for an API or archive failure: the Action runs on without a baseline.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentv_ci.errors import LoadError
from agentv_ci.github.api import GitHubApiError, GitHubClient
from agentv_ci.github.safe_unzip import UnsafeArchiveError, extract_zip
from agentv_ci.model.result import RunSummary
from agentv_ci.results.results_file import INDEX_NAME, SUMMARY_NAME, load_run

__all__ = [
    "DEFAULT_ARTIFACT_NAME",
    "ArtifactLimits",
    "BaselineDownload",
    "RunsDownload",
    "complete_run",
    "download_baseline",
    "download_runs",
]

DEFAULT_ARTIFACT_NAME = "agentv-ci-results"
_MAX_LISTED = 1_000  # the newest artifacts of that name looked at (GitHub lists newest first)
_PR_EVENTS = frozenset({"pull_request", "pull_request_target"})
# A base-branch run whose eval gate failed concluded `failure` but wrote complete results: they are a
# true baseline (the summary check below decides). Cancelled or timed-out runs are not.
_FINISHED = frozenset({"success", "failure"})


@dataclass(frozen=True)
class ArtifactLimits:
    """Bounds on the search and on what an (untrusted) artifact may cost."""

    max_candidates: int = 5
    max_download_bytes: int = 256 * 1024 * 1024
    max_extracted_bytes: int = 1024 * 1024 * 1024
    max_entries: int = 10_000
    max_seconds: float = 300.0  # the whole search; each download also ends at the client's deadline


@dataclass(frozen=True)
class BaselineDownload:
    """The baseline found (`directory` holds `index.jsonl`, `summary` is it loaded) or None, with
    `reason` saying which artifact was taken or why none was, and `passed_over` one line per
    candidate that was not taken."""

    directory: Path | None
    reason: str
    summary: RunSummary | None = None
    artifact_id: int | None = None
    run_id: int | None = None
    created_at: str | None = None
    commit: str | None = None  # the head commit of the run that made the artifact, when listed
    passed_over: tuple[str, ...] = field(default=())


def download_baseline(
    client: GitHubClient,
    base_branch: str,
    destination: Path | None = None,
    *,
    name: str = DEFAULT_ARTIFACT_NAME,
    limits: ArtifactLimits | None = None,
) -> BaselineDownload:
    """Find, download and check the baseline for `base_branch` (see the module docstring).

    Each candidate is extracted under `destination` (a new temporary directory when None) in its
    own `artifact-<id>/`; rejected candidates are removed again.
    """
    found = download_runs(client, base_branch, 1, destination, name=name, limits=limits)
    if found.runs:
        return found.runs[0]
    return BaselineDownload(None, found.reason, passed_over=found.passed_over)


@dataclass(frozen=True)
class RunsDownload:
    """The complete runs found, newest first (each a `BaselineDownload` with its directory and
    summary), why none or fewer were found (`reason`), and one line per candidate passed over."""

    runs: tuple[BaselineDownload, ...]
    reason: str
    passed_over: tuple[str, ...] = field(default=())


def download_runs(
    client: GitHubClient,
    base_branch: str,
    count: int,
    destination: Path | None = None,
    *,
    name: str = DEFAULT_ARTIFACT_NAME,
    limits: ArtifactLimits | None = None,
) -> RunsDownload:
    """The newest `count` complete runs of `base_branch` (the baseline's checks, for each), trying at
    most `limits.max_candidates` artifacts (`--history`: the base branch's last N runs)."""
    limits = limits or ArtifactLimits()
    started = time.monotonic()
    try:
        candidates = _candidates(client, base_branch, name)
    except GitHubApiError as exc:
        return RunsDownload((), f"could not list the {name!r} artifacts: {client.redact(str(exc))}")
    if not candidates:
        return RunsDownload(
            (), f"no unexpired {name!r} artifact from a run on {base_branch!r} in {client.repository}"
        )
    root = destination if destination is not None else Path(tempfile.mkdtemp(prefix="agentv-ci-baseline-"))
    passed_over: list[str] = []
    runs: list[BaselineDownload] = []
    for artifact in candidates[: limits.max_candidates]:
        artifact_id = int(artifact["id"])
        run_id = int(artifact["workflow_run"]["id"])
        created = str(artifact.get("created_at") or "")
        label = f"artifact {artifact_id} (run {run_id}, {created or 'undated'})"
        left = limits.max_seconds - (time.monotonic() - started)
        if left <= 0:
            passed_over.append(f"{label}: not tried, the search took its {limits.max_seconds:g} s")
            break
        try:
            found = _try_candidate(client, artifact, root, limits, min(left, client.download_timeout_s))
        except GitHubApiError as exc:
            found = client.redact(str(exc))
        if isinstance(found, str):
            passed_over.append(f"{label}: {found}")
            continue
        directory, summary = found
        runs.append(
            BaselineDownload(
                directory,
                f"baseline from {label} on {base_branch!r}",
                summary=summary,
                artifact_id=artifact_id,
                run_id=run_id,
                created_at=created or None,
                commit=_head_sha(artifact),
                passed_over=tuple(passed_over),
            )
        )
        if len(runs) == count:
            break
    if runs:
        reason = f"{len(runs)} complete run(s) of the {name!r} artifacts on {base_branch!r}"
        return RunsDownload(tuple(runs), reason, tuple(passed_over))
    if destination is None:
        shutil.rmtree(root, ignore_errors=True)  # our own temporary directory, holding nothing kept
    tried = min(len(candidates), limits.max_candidates)
    return RunsDownload(
        (),
        f"none of the {tried} newest {name!r} artifacts on {base_branch!r} holds a complete run",
        passed_over=tuple(passed_over),
    )


def _head_sha(artifact: dict[str, Any]) -> str | None:
    sha = artifact["workflow_run"].get("head_sha")
    return sha if isinstance(sha, str) and sha else None


def _candidates(client: GitHubClient, base_branch: str, name: str) -> list[dict[str, Any]]:
    listed = client.paginate(
        f"{client.repo_path}/actions/artifacts", params={"name": name}, items_key="artifacts"
    )
    kept = []
    for artifact in itertools.islice(listed, _MAX_LISTED):
        if not isinstance(artifact, dict) or artifact.get("name") != name or artifact.get("expired"):
            continue
        run = artifact.get("workflow_run")
        if not isinstance(run, dict) or run.get("head_branch") != base_branch:
            continue
        if not isinstance(artifact.get("id"), int) or not isinstance(run.get("id"), int):
            continue
        head_repo, repo = run.get("head_repository_id"), run.get("repository_id")
        if head_repo is not None and repo is not None and head_repo != repo:
            continue  # a fork's branch that happens to share the base branch's name
        kept.append(artifact)
    kept.sort(key=lambda a: (str(a.get("created_at") or ""), int(a["id"])), reverse=True)
    return kept


def _try_candidate(
    client: GitHubClient, artifact: dict[str, Any], root: Path, limits: ArtifactLimits, seconds: float
) -> tuple[Path, RunSummary] | str:
    """The results directory and its summary, or why this artifact is not a baseline."""
    run = client.get_json(f"{client.repo_path}/actions/runs/{int(artifact['workflow_run']['id'])}")
    if not isinstance(run, dict):
        return "the run could not be read"
    if run.get("conclusion") not in _FINISHED:
        return f"its run did not finish (conclusion {run.get('conclusion')!r})"
    if run.get("event") in _PR_EVENTS:
        return f"made by a {run.get('event')} run, not by the branch itself"
    size = artifact.get("size_in_bytes")
    if isinstance(size, int) and size > limits.max_download_bytes:
        return f"{size:,} bytes, more than the {limits.max_download_bytes:,} allowed"
    artifact_id = int(artifact["id"])
    target = root / f"artifact-{artifact_id}"
    archive = root / f"artifact-{artifact_id}.zip"
    root.mkdir(parents=True, exist_ok=True)
    try:
        client.download(
            f"{client.repo_path}/actions/artifacts/{artifact_id}/zip",
            archive,
            max_bytes=limits.max_download_bytes,
            timeout_s=seconds,
        )
        extract_zip(
            archive, target, max_total_bytes=limits.max_extracted_bytes, max_entries=limits.max_entries
        )
    except UnsafeArchiveError as exc:
        shutil.rmtree(target, ignore_errors=True)
        return f"rejected archive: {exc}"
    except GitHubApiError:
        shutil.rmtree(target, ignore_errors=True)
        raise
    finally:
        archive.unlink(missing_ok=True)
    checked = complete_run(target)
    if isinstance(checked, str):
        shutil.rmtree(target, ignore_errors=True)
    return checked


def complete_run(target: Path) -> tuple[Path, RunSummary] | str:
    """The results directory under `target` (an extracted artifact) and its summary, or why it is
    not a complete run's (also GitLab's job artifacts: platforms/gitlab/artifacts.py)."""
    indexes = sorted(target.rglob(INDEX_NAME), key=lambda p: (len(p.parts), str(p)))
    if not indexes:
        return f"no {INDEX_NAME} in the artifact"
    directory = indexes[0].parent
    if not (directory / SUMMARY_NAME).is_file():
        return f"no {SUMMARY_NAME} beside {INDEX_NAME} (an unfinished run)"
    try:
        summary = load_run(directory)
    except LoadError as exc:
        return f"unreadable results: {exc.message}"
    except (ValueError, OverflowError, TypeError, RecursionError, UnicodeDecodeError) as exc:
        # Whatever else a hostile archive provokes in the readers: still not a baseline, never a crash.
        return f"unreadable results: {type(exc).__name__}"
    problem = _incompleteness(summary)
    return problem if problem is not None else (directory, summary)


def _incompleteness(summary: RunSummary) -> str | None:
    if summary.interrupted:
        return "the run was interrupted"
    if summary.not_run:
        return f"{summary.not_run} test(s) did not run"
    if summary.budget_exhausted:
        return "the run's budget was exhausted"
    if summary.dry_run:
        return "a dry run (no real answers)"
    if not summary.results:
        return "no results"
    return None
