"""The workflow run as the Action sees it: GITHUB_* variables and the event payload."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentv_ci.errors import UsageError
from agentv_ci.github.event import read_workflow_run


def _pr_event(head_repo: str | None = "octo/app") -> dict[str, object]:
    return {
        "action": "synchronize",
        "number": 7,
        "pull_request": {
            "number": 7,
            "base": {"sha": "b" * 40, "ref": "main", "repo": {"full_name": "octo/app"}},
            "head": {
                "sha": "h" * 40,
                "ref": "feature",
                "repo": None if head_repo is None else {"full_name": head_repo},
            },
        },
        "repository": {"full_name": "octo/app"},
    }


def _env(tmp_path: Path, event: dict[str, object], name: str = "pull_request") -> dict[str, str]:
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event), encoding="utf-8")
    return {
        "GITHUB_EVENT_NAME": name,
        "GITHUB_EVENT_PATH": str(path),
        "GITHUB_REPOSITORY": "octo/app",
        "GITHUB_SERVER_URL": "https://github.example",
        "GITHUB_RUN_ID": "42",
        "GITHUB_RUN_ATTEMPT": "1",
        "GITHUB_WORKSPACE": str(tmp_path),
    }


def test_pull_request_event(tmp_path: Path) -> None:
    run = read_workflow_run(_env(tmp_path, _pr_event()))
    assert run.is_pull_request
    assert run.pull_request is not None
    assert run.pull_request.number == 7
    assert run.pull_request.base_sha == "b" * 40
    assert run.pull_request.is_fork is False
    assert run.base_branch == "main"
    assert run.run_url == "https://github.example/octo/app/actions/runs/42"
    assert run.workspace == tmp_path


def test_fork_and_deleted_fork(tmp_path: Path) -> None:
    run = read_workflow_run(_env(tmp_path, _pr_event("someone/app")))
    assert run.pull_request is not None and run.pull_request.is_fork
    run = read_workflow_run(_env(tmp_path, _pr_event(None)))
    assert run.pull_request is not None and run.pull_request.is_fork


def test_push_event_has_no_pull_request(tmp_path: Path) -> None:
    env = _env(tmp_path, {"ref": "refs/heads/main", "before": "0" * 40}, "push")
    env["GITHUB_REF_NAME"] = "main"
    run = read_workflow_run(env)
    assert not run.is_pull_request
    assert run.base_branch == "main"


def test_rerun_attempt_links_to_the_attempt(tmp_path: Path) -> None:
    env = _env(tmp_path, _pr_event())
    env["GITHUB_RUN_ATTEMPT"] = "3"
    assert read_workflow_run(env).run_url == "https://github.example/octo/app/actions/runs/42/attempts/3"


def test_broken_event_file_is_bad_input(tmp_path: Path) -> None:
    path = tmp_path / "event.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(UsageError, match="is not valid JSON"):
        read_workflow_run({"GITHUB_EVENT_PATH": str(path)})
    with pytest.raises(UsageError, match="cannot read the event payload"):
        read_workflow_run({"GITHUB_EVENT_PATH": str(tmp_path / "missing.json")})
