"""`baseline: auto` on GitLab: the results of the target branch's latest successful pipeline.

`GET /projects/:id/jobs/artifacts/:ref/download?job=NAME` answers the zip of job NAME's artifacts in
the newest successful pipeline of branch `ref` (a branch pipeline: merge-request pipelines have
other refs, and a fork's branch of the same name is another project). The zip is untrusted: its size
is capped while it downloads, it is extracted by github/safe_unzip.py and must hold a complete run
(github/artifacts.py's checks: not interrupted, nothing unrun, no dry run, at least one result).
`fetch_job_results` is that download and check, which `history: N` also uses for each pipeline
(platforms/gitlab/pipeline_history.py).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from urllib.parse import quote

from agentv_ci.action.baseline import Baseline, missing_baseline
from agentv_ci.github.api import GitHubApiError
from agentv_ci.github.artifacts import ArtifactLimits, complete_run
from agentv_ci.github.safe_unzip import UnsafeArchiveError, extract_zip
from agentv_ci.model.baseline import BaselineSource
from agentv_ci.model.result import RunSummary
from agentv_ci.platforms.gitlab.client import GitLabClient, describe

__all__ = ["download_job_baseline", "fetch_job_results"]


def download_job_baseline(
    client: GitLabClient, branch: str, job: str, *, web_url: str, limits: ArtifactLimits | None = None
) -> Baseline:
    """The baseline from job `job`'s artifacts on `branch`, or none with the reason. The extracted
    files live in a temporary directory until the process ends (the summary is loaded already)."""
    limits = limits or ArtifactLimits()
    path = f"{client.repo_path}/jobs/artifacts/{quote(branch, safe='')}/download"
    scratch = Path(tempfile.mkdtemp(prefix="agentv-ci-gitlab-baseline-"))
    try:
        checked = fetch_job_results(client, f"{path}?job={quote(job, safe='')}", scratch, limits)
    except GitHubApiError as exc:
        shutil.rmtree(scratch, ignore_errors=True)
        if exc.status == 404:
            return missing_baseline(
                f"baseline: auto: no artifacts of job {job!r} on {branch} (no successful pipeline)"
            )
        return missing_baseline(f"baseline: auto: {describe(exc)}")
    if isinstance(checked, str):
        shutil.rmtree(scratch, ignore_errors=True)
        return missing_baseline(f"baseline: auto: job {job!r} on {branch}: {checked}")
    _, summary = checked
    browse = (
        f"{web_url.rstrip('/')}/-/jobs/artifacts/{quote(branch, safe='')}/browse?job={quote(job, safe='')}"
    )
    source = BaselineSource("artifact", name=f"{job}@{branch}", run_url=browse if web_url else None)
    return Baseline(summary, source)


def fetch_job_results(
    client: GitLabClient, path: str, scratch: Path, limits: ArtifactLimits, *, timeout_s: float | None = None
) -> tuple[Path, RunSummary] | str:
    """Download the artifacts zip at `path` (capped), extract it safely under `scratch/files` and
    return the complete run it holds, or why it is not one. Raises `GitHubApiError` for the API."""
    archive = scratch / "artifacts.zip"
    scratch.mkdir(parents=True, exist_ok=True)
    try:
        client.download(path, archive, max_bytes=limits.max_download_bytes, timeout_s=timeout_s)
        extract_zip(
            archive,
            scratch / "files",
            max_total_bytes=limits.max_extracted_bytes,
            max_entries=limits.max_entries,
        )
    except UnsafeArchiveError as exc:
        return f"rejected archive: {exc}"
    finally:
        archive.unlink(missing_ok=True)
    return complete_run(scratch / "files")
