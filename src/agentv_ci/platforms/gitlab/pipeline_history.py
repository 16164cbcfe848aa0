"""`history: N` on GitLab: the results of job NAME in the target branch's last N successful pipelines.

Candidates are the branch's own pipelines (`GET /projects/:id/pipelines?ref=BRANCH&status=success`,
newest first), never merge-request pipelines (`source: merge_request_event`, whose ref is the MR's)
nor any other branch's, so a merge request cannot write its own history. For each, at most
`limits.max_candidates` of them, the pipeline's successful job NAME (the baseline's job) is looked
up and its artifacts (`GET /projects/:id/jobs/:job_id/artifacts`) downloaded and checked as the
baseline's are (platforms/gitlab/artifacts.py: size caps, safe unzip, a complete run). Candidates
that fail a check are passed over with the reason; an API failure ends the search (the caller warns).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentv_ci.github.artifacts import ArtifactLimits, BaselineDownload, RunsDownload
from agentv_ci.platforms.gitlab.artifacts import fetch_job_results
from agentv_ci.platforms.gitlab.client import GitLabClient

__all__ = ["download_pipeline_runs"]

_MAX_JOBS = 1_000  # jobs of one pipeline looked at


def download_pipeline_runs(
    client: GitLabClient, branch: str, job: str, count: int, destination: Path, limits: ArtifactLimits
) -> RunsDownload:
    """The newest `count` complete runs of job `job` on `branch`, newest first (see the module
    docstring); each extracted under `destination/pipeline-<id>/`. Raises `GitHubApiError`."""
    started = time.monotonic()
    listed = client.paginate(
        f"{client.repo_path}/pipelines",
        params={
            "ref": branch,
            "status": "success",
            "order_by": "id",
            "sort": "desc",
            "per_page": min(100, limits.max_candidates),
        },
    )
    runs: list[BaselineDownload] = []
    passed_over: list[str] = []
    tried = 0
    for pipeline in itertools.islice(listed, limits.max_candidates):
        pipeline_id = _branch_pipeline(pipeline, branch)
        if pipeline_id is None:
            continue  # not this branch's own successful pipeline, whatever the server's filters did
        tried += 1
        label = f"pipeline {pipeline_id}"
        left = limits.max_seconds - (time.monotonic() - started)
        if left <= 0:
            passed_over.append(f"{label}: not tried, the search took its {limits.max_seconds:g} s")
            break
        job_id = _successful_job(client, pipeline_id, job)
        if job_id is None:
            passed_over.append(f"{label}: no successful job {job!r}")
            continue
        checked = fetch_job_results(
            client,
            f"{client.repo_path}/jobs/{job_id}/artifacts",
            destination / f"pipeline-{pipeline_id}",
            limits,
            timeout_s=min(left, client.download_timeout_s),
        )
        if isinstance(checked, str):
            passed_over.append(f"{label} (job {job_id}): {checked}")
            continue
        directory, summary = checked
        sha = pipeline.get("sha")
        runs.append(
            BaselineDownload(
                directory,
                f"job {job!r} of {label} on {branch!r}",
                summary=summary,
                artifact_id=job_id,
                run_id=pipeline_id,
                commit=sha if isinstance(sha, str) and sha else None,
            )
        )
        if len(runs) == count:
            break
    if runs:
        reason = f"{len(runs)} complete run(s) of job {job!r} in successful pipelines on {branch!r}"
        return RunsDownload(tuple(runs), reason, tuple(passed_over))
    if not tried:
        return RunsDownload((), f"no successful pipeline on {branch!r}", tuple(passed_over))
    return RunsDownload(
        (),
        f"none of the {tried} newest successful pipelines on {branch!r} has a complete run of job {job!r}",
        tuple(passed_over),
    )


def _branch_pipeline(pipeline: Any, branch: str) -> int | None:
    """The pipeline's id when it is a successful pipeline of `branch` itself, else None."""
    if not isinstance(pipeline, Mapping):
        return None
    pipeline_id = pipeline.get("id")
    if not isinstance(pipeline_id, int) or isinstance(pipeline_id, bool) or pipeline_id <= 0:
        return None
    if pipeline.get("ref") != branch or pipeline.get("status") != "success":
        return None
    if pipeline.get("source") == "merge_request_event":
        return None
    return pipeline_id


def _successful_job(client: GitLabClient, pipeline_id: int, job: str) -> int | None:
    """The id of the newest successful job named `job` in the pipeline, or None."""
    jobs = client.paginate(f"{client.repo_path}/pipelines/{pipeline_id}/jobs", params={"scope[]": "success"})
    found = [
        entry["id"]
        for entry in itertools.islice(jobs, _MAX_JOBS)
        if isinstance(entry, Mapping)
        and entry.get("name") == job
        and entry.get("status") == "success"
        and isinstance(entry.get("id"), int)
        and not isinstance(entry.get("id"), bool)
        and entry["id"] > 0
    ]
    return max(found) if found else None
