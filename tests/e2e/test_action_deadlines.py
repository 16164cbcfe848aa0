"""The Action's GitHub calls have wall-clock deadlines (issue 19, item 5): with `baseline: auto`, the
fake GitHub on 127.0.0.1 drips the artifact download (it used to hold the Action at 1 byte/s until
it was killed) or the artifact listing, one byte every 0.5 s. The Action gives up at the deadline
(set to 2 s here through `AGENTV_CI_GITHUB_DOWNLOAD_TIMEOUT` / `AGENTV_CI_GITHUB_TIMEOUT`), says why
in the log, runs on without a baseline, and the passing PR stays green (exit 0, not 4)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from agentv_ci.deadlines import (
    GITHUB_DOWNLOAD_TIMEOUT_S,
    GITHUB_DOWNLOAD_TIMEOUT_VARIABLE,
    GITHUB_TIMEOUT_S,
    GITHUB_TIMEOUT_VARIABLE,
)
from tests.e2e.scaffold import PASSING, Project, run_action
from tests.fakes.github_server import FakeGitHub

_ROW = {"test_id": "capital", "suite": "geo", "target": "default", "execution_status": "ok", "score": 1.0}
_FILES = {
    "index.jsonl": json.dumps(_ROW) + "\n",
    "summary.json": json.dumps({"total": 1, "passed": 1, "failed": 0, "errors": 0}),
}
SLACK_S = 40.0  # the Action's own run (git, the eval, the comment) on a loaded 2-core box


def _run(tmp_path: Path, github: FakeGitHub, **variables: str) -> tuple[str, Project, float, int]:
    project = Project(tmp_path)
    project.commit({"evals/geo.eval.yaml": PASSING + "  # touched\n"})
    env = {**project.env(github, project.event(), baseline="auto"), **variables}
    started = time.monotonic()
    done = run_action(env, project.repo)
    elapsed = time.monotonic() - started
    log = done.stdout + done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr, log
    return log, project, elapsed, done.returncode


def test_a_dripping_artifact_download_ends_at_its_deadline_and_the_pr_stays_green(
    tmp_path: Path, github_server: FakeGitHub
) -> None:
    assert (GITHUB_TIMEOUT_S, GITHUB_DOWNLOAD_TIMEOUT_S) == (30, 120)  # as docs/github.md says
    docs = (Path(__file__).resolve().parents[2] / "docs" / "github.md").read_text(encoding="utf-8")
    assert GITHUB_DOWNLOAD_TIMEOUT_VARIABLE in docs and "120 s" in docs and "30 s" in docs
    github_server.add_artifact(files=_FILES)
    github_server.drip_next(path="/blobs/", server="storage", where="body", interval_s=0.5)

    log, project, elapsed, code = _run(tmp_path, github_server, **{GITHUB_DOWNLOAD_TIMEOUT_VARIABLE: "2"})

    assert code == 0, log
    assert project.outputs()["verdict"] == "passed"
    assert "no baseline used" in log
    assert "timed out after 2s (wall clock)" in log  # the passed-over artifact says why
    assert github_server.dripped and github_server.dripped[0] <= 8, github_server.dripped  # ~4 bytes
    assert elapsed < 2 + SLACK_S, elapsed


def test_a_dripping_api_answer_ends_at_its_deadline_and_the_pr_stays_green(
    tmp_path: Path, github_server: FakeGitHub
) -> None:
    github_server.add_artifact(files=_FILES)
    github_server.drip_next(path="/actions/artifacts", where="headers", interval_s=0.5)

    log, project, elapsed, code = _run(tmp_path, github_server, **{GITHUB_TIMEOUT_VARIABLE: "2"})

    assert code == 0, log
    assert project.outputs()["verdict"] == "passed"
    assert "could not list the 'agentv-ci-results' artifacts" in log
    assert "timed out after 2s (wall clock)" in log and "no baseline used" in log
    assert github_server.dripped and github_server.dripped[0] <= 8, github_server.dripped
    assert elapsed < 2 + SLACK_S, elapsed
