"""`baseline: auto` against the fake GitHub: which artifact is taken, which are passed over, and why."""

from __future__ import annotations

import io
import random
import tempfile
import zipfile
from pathlib import Path

import pytest

from agentv_ci.github.api import GitHubApiError, GitHubClient
from agentv_ci.github.artifacts import ArtifactLimits, download_baseline
from agentv_ci.model.result import TestResult
from agentv_ci.results.results_file import ResultsWriter, summary_from_results, write_summary_json
from tests.fakes.github_server import Artifact, FakeGitHub


def _results(
    tmp_path: Path,
    score: float,
    *,
    prefix: str = "",
    with_summary: bool = True,
    **facts: object,
) -> dict[str, bytes]:
    """The files of a results artifact, written by our own writers."""
    folder = tmp_path / f"made-{score}-{len(list(tmp_path.glob('made-*')))}"
    rows = [TestResult("t1", "s", "m", score, "ok", verdict="pass")]
    with ResultsWriter(folder / "index.jsonl") as writer:
        for row in rows:
            writer.append(row)
    files = {f"{prefix}index.jsonl": (folder / "index.jsonl").read_bytes()}
    if with_summary:
        write_summary_json(folder / "summary.json", summary_from_results(rows, **facts))
        files[f"{prefix}summary.json"] = (folder / "summary.json").read_bytes()
    return files


def _find(client: GitHubClient, tmp_path: Path, **kw: object):  # type: ignore[no-untyped-def]
    return download_baseline(client, "main", tmp_path / "baseline", **kw)  # type: ignore[arg-type]


def _downloaded(github: FakeGitHub) -> set[str]:
    return {r.path for r in github.calls("GET", "/zip")}


def _zip_path(artifact: Artifact) -> str:
    return f"/repos/octo/demo/actions/artifacts/{artifact.id}/zip"


def test_newest_complete_artifact_on_the_base_branch_is_taken(
    github_server: FakeGitHub, github_client: GitHubClient, tmp_path: Path
) -> None:
    github_server.add_artifact(files=_results(tmp_path, 0.5))
    newest = github_server.add_artifact(files=_results(tmp_path, 0.7))
    found = _find(github_client, tmp_path)
    assert found.directory is not None and found.artifact_id == newest.id and found.run_id == newest.run_id
    assert (found.directory / "index.jsonl").is_file()
    assert found.summary is not None and found.summary.results[0].score == 0.7
    assert found.directory.is_relative_to(tmp_path / "baseline")
    assert _downloaded(github_server) == {_zip_path(newest)}
    assert "baseline from artifact" in found.reason and found.passed_over == ()


def test_incomplete_failed_expired_and_foreign_artifacts_are_passed_over(
    github_server: FakeGitHub, github_client: GitHubClient, tmp_path: Path
) -> None:
    good = github_server.add_artifact(files=_results(tmp_path, 0.6))
    github_server.add_artifact(files=_results(tmp_path, 0.1), branch="feature")  # another branch
    github_server.add_artifact(files=_results(tmp_path, 0.1), from_fork=True)  # a fork's own `main`
    github_server.add_artifact(files=_results(tmp_path, 0.1), name="other-results")
    expired = github_server.add_artifact(files=_results(tmp_path, 0.1), expired=True)
    cancelled = github_server.add_artifact(files=_results(tmp_path, 0.1), conclusion="cancelled")
    pr_run = github_server.add_artifact(files=_results(tmp_path, 0.1), event="pull_request")
    partial = github_server.add_artifact(files=_results(tmp_path, 0.1, not_run=2))
    stopped = github_server.add_artifact(files=_results(tmp_path, 0.1, interrupted=True))
    found = _find(github_client, tmp_path, limits=ArtifactLimits(max_candidates=10))
    assert found.artifact_id == good.id and found.summary is not None
    assert found.summary.results[0].score == 0.6
    reasons = "\n".join(found.passed_over)
    assert len(found.passed_over) == 4, reasons  # expired, other branch, fork, other name: never candidates
    assert f"artifact {stopped.id}" in reasons and "the run was interrupted" in reasons
    assert f"artifact {partial.id}" in reasons and "2 test(s) did not run" in reasons
    assert f"artifact {pr_run.id}" in reasons and "pull_request run" in reasons
    assert f"artifact {cancelled.id}" in reasons and "conclusion 'cancelled'" in reasons
    assert _zip_path(expired) not in _downloaded(github_server)
    assert _downloaded(github_server) == {_zip_path(stopped), _zip_path(partial), _zip_path(good)}
    kept = sorted(p.name for p in (tmp_path / "baseline").iterdir())
    assert kept == [f"artifact-{good.id}"]  # rejected downloads are cleaned up


@pytest.mark.parametrize(
    ("facts", "reason"),
    [
        ({"budget_exhausted": True}, "budget was exhausted"),
        ({"dry_run": True}, "a dry run"),
        ({"with_summary": False}, "no summary.json beside index.jsonl"),
    ],
)
def test_other_incomplete_runs_are_not_baselines(
    github_server: FakeGitHub,
    github_client: GitHubClient,
    tmp_path: Path,
    facts: dict[str, object],
    reason: str,
) -> None:
    github_server.add_artifact(files=_results(tmp_path, 0.1, **facts))
    found = _find(github_client, tmp_path)
    assert found.directory is None and reason in found.passed_over[0]
    assert "holds a complete run" in found.reason


def test_results_in_a_subdirectory_are_found(
    github_server: FakeGitHub, github_client: GitHubClient, tmp_path: Path
) -> None:
    github_server.add_artifact(files={**_results(tmp_path, 0.8, prefix="out/run/"), "out/junit.xml": "<x/>"})
    found = _find(github_client, tmp_path)
    assert found.directory is not None and found.directory.name == "run"


def test_the_token_is_not_sent_to_the_storage_host(
    github_server: FakeGitHub, github_client: GitHubClient, tmp_path: Path
) -> None:
    github_server.add_artifact(files=_results(tmp_path, 0.9))
    assert _find(github_client, tmp_path).directory is not None
    [download] = github_server.requests_to("storage")
    assert "authorization" not in download.headers  # httpx drops it on a cross-origin redirect
    assert all(
        FakeGitHub.PAT not in value for value in [*download.headers.values(), *download.query.values()]
    )
    assert github_server.calls("GET", "/zip")[0].headers["authorization"] == f"Bearer {FakeGitHub.PAT}"


def test_a_zip_slip_entry_rejects_the_artifact(
    github_server: FakeGitHub, github_client: GitHubClient, tmp_path: Path
) -> None:
    good = github_server.add_artifact(files=_results(tmp_path, 0.9))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in _results(tmp_path, 0.1).items():
            archive.writestr(name, content)
        archive.writestr("../../escaped.txt", "owned")
    evil = github_server.add_artifact(content=buffer.getvalue())
    found = _find(github_client, tmp_path)
    assert found.artifact_id == good.id
    assert f"artifact {evil.id}" in found.passed_over[0] and "'..'" in found.passed_over[0]
    assert not list(tmp_path.rglob("escaped.txt"))


def test_a_corrupt_download_is_passed_over(
    github_server: FakeGitHub, github_client: GitHubClient, tmp_path: Path
) -> None:
    github_server.add_artifact(content=b"PK\x03\x04 not really a zip")
    found = _find(github_client, tmp_path)
    assert found.directory is None and "not a readable zip archive" in found.passed_over[0]


def test_an_oversized_artifact_is_not_downloaded(
    github_server: FakeGitHub, github_client: GitHubClient, tmp_path: Path
) -> None:
    noise = random.Random(0).randbytes(50_000)  # incompressible
    big = github_server.add_artifact(files={**_results(tmp_path, 0.9), "big.bin": noise})
    found = _find(github_client, tmp_path, limits=ArtifactLimits(max_download_bytes=1_000))
    assert found.directory is None and "more than the 1,000 allowed" in found.passed_over[0]
    assert github_server.requests_to("storage") == []
    # a size the listing understates is still caught while streaming
    with pytest.raises(GitHubApiError, match="download larger than 1,000 bytes"):
        github_client.download(_zip_path(big), tmp_path / "big.zip", max_bytes=1_000)


def test_the_search_is_bounded(
    github_server: FakeGitHub, github_client: GitHubClient, tmp_path: Path
) -> None:
    github_server.page_size = 3  # the listing is paginated too
    for _ in range(7):
        github_server.add_artifact(files=_results(tmp_path, 0.1, not_run=1))
    found = _find(github_client, tmp_path, limits=ArtifactLimits(max_candidates=5))
    assert found.directory is None and len(found.passed_over) == 5
    assert len(github_server.calls("GET", "/actions/runs/")) == 5
    assert "none of the 5 newest 'agentv-ci-results' artifacts on 'main'" in found.reason


def test_no_artifact_at_all(github_server: FakeGitHub, github_client: GitHubClient, tmp_path: Path) -> None:
    found = _find(github_client, tmp_path)
    assert found.directory is None
    assert found.reason == "no unexpired 'agentv-ci-results' artifact from a run on 'main' in octo/demo"


def test_api_failures_give_no_baseline_and_no_exception(
    github_server: FakeGitHub, github_client: GitHubClient, tmp_path: Path
) -> None:
    github_server.fail_next(500, times=4, path="/actions/artifacts", message=f"oops {FakeGitHub.PAT}")
    listing = _find(github_client, tmp_path)
    assert listing.directory is None and "could not list" in listing.reason
    assert FakeGitHub.PAT not in listing.reason and "oops ***" in listing.reason
    good = github_server.add_artifact(files=_results(tmp_path, 0.9))
    github_server.fail_next(404, path=f"/actions/runs/{good.run_id}", message="Not Found")
    run_gone = _find(github_client, tmp_path)
    assert run_gone.directory is None and "HTTP 404: Not Found" in run_gone.passed_over[0]


def test_a_failed_storage_download_is_retried(
    github_server: FakeGitHub, github_client: GitHubClient, tmp_path: Path, slept: list[float]
) -> None:
    good = github_server.add_artifact(files=_results(tmp_path, 0.9))
    github_server.fail_next(503, path="/zip")
    assert _find(github_client, tmp_path).artifact_id == good.id
    assert slept == [1.0]


def test_without_a_destination_a_temporary_directory_is_used_and_cleaned_when_empty(
    github_server: FakeGitHub, github_client: GitHubClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    github_server.add_artifact(files=_results(tmp_path, 0.1, not_run=1))
    assert download_baseline(github_client, "main").directory is None
    assert list((tmp_path / "tmp").iterdir()) == []
    github_server.add_artifact(files=_results(tmp_path, 0.9))
    found = download_baseline(github_client, "main")
    assert found.directory is not None and found.directory.is_relative_to(tmp_path / "tmp")


def test_a_base_run_whose_eval_gate_failed_is_still_a_baseline(
    github_server: FakeGitHub, github_client: GitHubClient, tmp_path: Path
) -> None:
    """The base branch's evals failing a gate (exit 1, run conclusion `failure`) is exactly when a PR
    most needs the comparison: complete results count, whatever the gate said."""
    red = github_server.add_artifact(files=_results(tmp_path, 0.2), conclusion="failure")
    found = _find(github_client, tmp_path)
    assert found.artifact_id == red.id and found.summary is not None
