"""The end-to-end project scaffold of the Action tests: a real git repository with two evals on `main`
and a feature branch (`Project`), its GitHub environment and event file, and `run_action` (the
`agentv-ci-action` console script in a subprocess). About thirty e2e modules build on it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.github_server import FakeGitHub
from tests.git_repos import git

TOKEN = FakeGitHub.INSTALLATION
PASSING = """\
tests:
  - id: capital
    input: What is the capital of France?
    expected_output: Paris
    assertions:
      - type: contains
        value: Paris
"""
FAILING = """\
tests:
  - id: add
    input: What is 2 + 2?
    expected_output: "4"
    assertions:
      - type: contains
        value: "5"
"""


class Project:
    """A repository with two evals on `main` and a feature branch on top."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.repo = root / "repo"
        (self.repo / ".agentv").mkdir(parents=True)
        (self.repo / ".agentv" / "targets.yaml").write_text(
            "targets:\n  - name: default\n    provider: mock\n", encoding="utf-8"
        )
        (self.repo / "evals").mkdir()
        (self.repo / "evals" / "geo.eval.yaml").write_text(PASSING, encoding="utf-8")
        (self.repo / "evals" / "math.eval.yaml").write_text(
            PASSING.replace("capital", "add"), encoding="utf-8"
        )
        (self.repo / "README.md").write_text("demo\n", encoding="utf-8")
        git(self.repo, "init", "-q", "-b", "main")
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-qm", "base")
        self.base = git(self.repo, "rev-parse", "HEAD")
        git(self.repo, "checkout", "-qb", "feature")

    def commit(self, files: dict[str, str], message: str = "change") -> str:
        for name, text in files.items():
            (self.repo / name).write_text(text, encoding="utf-8")
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-qm", message)
        return git(self.repo, "rev-parse", "HEAD")

    def event(self, *, head_repo: str = "octo/demo", name: str = "pull_request") -> Path:
        head = git(self.repo, "rev-parse", "HEAD")
        payload: dict[str, Any] = {
            "action": "synchronize",
            "number": 7,
            "pull_request": {
                "number": 7,
                "base": {"sha": self.base, "ref": "main", "repo": {"full_name": "octo/demo"}},
                "head": {"sha": head, "ref": "feature", "repo": {"full_name": head_repo}},
            },
            "repository": {"full_name": "octo/demo"},
        }
        if name == "push":
            payload = {"ref": "refs/heads/main", "before": self.base, "after": head}
        path = self.root / "event.json"
        path.write_text(json.dumps(payload), encoding="utf-8")
        return path

    def env(
        self, github: FakeGitHub, event: Path, name: str = "pull_request", **inputs: str
    ) -> dict[str, str]:
        files = self.root / "files"
        files.mkdir(exist_ok=True)
        base = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_"))}
        return {
            **base,
            "HOME": str(self.root / "home"),
            "GIT_CONFIG_GLOBAL": str(self.root / "gitconfig"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GITHUB_ACTIONS": "true",
            "CI": "true",
            "GITHUB_WORKSPACE": str(self.repo),
            "GITHUB_EVENT_NAME": name,
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_OUTPUT": str(files / "output"),
            "GITHUB_STEP_SUMMARY": str(files / "summary.md"),
            "GITHUB_API_URL": github.base_url,
            "GITHUB_SERVER_URL": "https://github.example",
            "GITHUB_REPOSITORY": "octo/demo",
            "GITHUB_RUN_ID": "99",
            "GITHUB_WORKFLOW": "evals",
            "INPUT_GITHUB_TOKEN": TOKEN,
            **{f"INPUT_{k.upper()}": v for k, v in inputs.items()},
        }

    def outputs(self) -> dict[str, str]:
        return parse_outputs((self.root / "files" / "output").read_text(encoding="utf-8"))


def parse_outputs(text: str) -> dict[str, str]:
    """The `name<<DELIM ... DELIM` file GitHub reads (the last value of a name wins)."""
    values: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        name, _, delimiter = line.partition("<<")
        assert delimiter, f"not a heredoc output line: {line!r}"
        body: list[str] = []
        for value_line in lines:
            if value_line == delimiter:
                break
            body.append(value_line)
        values[name] = "\n".join(body)
    return values


def run_action(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The `agentv-ci-action` console script, as the container runs it (`args`: a `with: args:`)."""
    return subprocess.run(
        [sys.executable, "-c", "from agentv_ci.__main__ import action_main; action_main()", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)
