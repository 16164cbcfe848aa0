"""`agentv-ci action` with committed sidecar baselines: a pull request whose agent got worse fails
against the `<eval>.baseline.jsonl` committed on main (written by `run --update-baseline`), and the
log, the step summary and the sticky comment name the sidecar."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.e2e.scaffold import Project, run_action
from tests.e2e.test_sidecar_baselines import AGENT, GEO, GOOD, WORSE, cli
from tests.fakes.github_server import FakeGitHub
from tests.git_repos import git

SIDECAR = "evals/geo.eval.baseline.jsonl"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def _with_cli_agent_and_sidecar(project: Project) -> None:
    """Main gets a cli agent, one eval file and the sidecar `run --update-baseline` wrote for it."""
    repo = project.repo
    git(repo, "checkout", "-q", "main")
    (repo / "evals" / "math.eval.yaml").unlink()
    (repo / "evals" / "geo.eval.yaml").write_text(GEO, encoding="utf-8")
    (repo / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: agent\n    provider: cli\n"
        f"    command: {sys.executable} agent.py {{OUTPUT_FILE}}\n    cwd: ..\n",
        encoding="utf-8",
    )
    (repo / "agent.py").write_text(AGENT, encoding="utf-8")
    (repo / "answer.txt").write_text(GOOD, encoding="utf-8")
    (repo / ".gitignore").write_text(".agentv-ci/\n", encoding="utf-8")
    written = cli(repo, "run", "evals", "--update-baseline", "-q")
    assert written.returncode == 0, written.stdout + written.stderr
    assert (repo / SIDECAR).is_file()
    project.base = project.commit({}, "cli agent and its committed baseline")
    git(repo, "checkout", "-qB", "feature")


def test_a_worse_agent_fails_against_the_committed_sidecar_and_the_comment_names_it(
    project: Project, github_server: FakeGitHub
) -> None:
    _with_cli_agent_and_sidecar(project)
    project.commit({"answer.txt": WORSE}, "a worse agent")  # the eval file is unchanged
    env = project.env(github_server, project.event(), changed_only="false", max_regression="0.1")

    done = run_action(env, project.root)

    assert done.returncode == 1, done.stdout + done.stderr
    assert f"baseline: committed sidecar {SIDECAR}" in done.stdout
    assert "geo/words [agent]: regressed vs baseline (1.000 -> 0.500)" in done.stdout
    [comment] = github_server.comments_on(7)
    assert "FAILED" in comment.body
    assert f"**Baseline:** committed sidecar `{SIDECAR}`." in comment.body
    assert "regressed" in comment.body
    step_summary = (project.root / "files" / "summary.md").read_text(encoding="utf-8")
    assert f"committed sidecar `{SIDECAR}`" in step_summary
    recorded = json.loads((project.repo / ".agentv-ci/results/summary.json").read_text(encoding="utf-8"))
    assert recorded["baseline"] == {"kind": "sidecar", "files": [SIDECAR]}
    assert project.outputs()["verdict"] == "failed"


def test_the_same_agent_passes_against_its_sidecar(project: Project, github_server: FakeGitHub) -> None:
    _with_cli_agent_and_sidecar(project)
    project.commit({"README.md": "docs\n"}, "docs only")
    env = project.env(github_server, project.event(), changed_only="false", max_regression="0.1")

    done = run_action(env, project.root)

    assert done.returncode == 0, done.stdout + done.stderr
    assert f"baseline: committed sidecar {SIDECAR}" in done.stdout
    [comment] = github_server.comments_on(7)
    assert "PASSED" in comment.body and f"committed sidecar `{SIDECAR}`" in comment.body
