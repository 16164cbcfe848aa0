"""A hostile or broken baseline artifact is passed over with a notice and never changes the PR's
verdict (issue 19, item 7): the Action, on a passing PR with `baseline: auto`, against the fake GitHub
serving artifacts whose rows are nested 3,000 deep, score a 400-digit number, or whose summary is
100,000 deep."""

from __future__ import annotations

import json

import pytest

from tests.e2e.scaffold import PASSING, Project, run_action
from tests.fakes.github_server import FakeGitHub

_ROW = {"test_id": "capital", "suite": "geo", "target": "default", "execution_status": "ok"}
_SUMMARY = json.dumps({"total": 1, "passed": 1, "failed": 0, "errors": 0}).encode()

HOSTILE: dict[str, dict[str, bytes]] = {
    "deep row": {
        "index.jsonl": (
            json.dumps({**_ROW, "score": 1.0})[:-1] + ', "x": ' + "[" * 3000 + "]" * 3000 + "}\n"
        ).encode(),
        "summary.json": _SUMMARY,
    },
    "400-digit score": {
        "index.jsonl": (json.dumps({**_ROW, "score": 0})[:-2] + "9" * 400 + "}\n").encode(),
        "summary.json": _SUMMARY,
    },
    "deep summary": {
        "index.jsonl": (json.dumps({**_ROW, "score": 1.0}) + "\n").encode(),
        "summary.json": b'{"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    },
    "rows not objects": {"index.jsonl": b'[1, 2]\n"text"\nnull\n', "summary.json": _SUMMARY},
    "binary": {"index.jsonl": bytes(range(256)) * 4, "summary.json": b"\xff\xfe"},
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_baseline_artifact_leaves_a_passing_run_green(
    tmp_path: object, github_server: FakeGitHub, kind: str
) -> None:
    from pathlib import Path

    assert isinstance(tmp_path, Path)
    project = Project(tmp_path)
    project.commit({"evals/geo.eval.yaml": PASSING + "  # touched\n"})
    github_server.add_artifact(files=HOSTILE[kind])
    env = project.env(github_server, project.event(), baseline="auto")
    done = run_action(env, project.repo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    assert "no baseline used" in done.stdout + done.stderr  # the notice says why, in the log
    assert project.outputs()["verdict"] == "passed"
