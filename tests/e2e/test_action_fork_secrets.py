"""A fork's `pull_request` gets no secrets: the Action runs the tests whose targets need no key, records
the others as not run (`needs_secret`, naming the variable), writes every report and exits 3
(inconclusive, never green), with a headline that says how many tests need secrets and how a
maintainer runs them. The trusted `workflow_run` comment on the fork's results says the same."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.scaffold import PASSING, Project, run_action
from tests.fakes.github_server import FakeGitHub
from tests.fakes.llm_server import FakeLlmServer
from tests.git_repos import git

KEYED_EVAL = """\
execution:
  target: llm
tests:
  - id: refund
    input: How long is the refund window?
    assertions:
      - type: contains
        value: "30 days"
  - id: shipping
    input: Do you ship abroad?
    assertions:
      - type: contains
        value: "yes"
"""
JUDGED_EVAL = """\
tests:
  - id: tone
    input: Say hello politely.
    expected_output: Hello!
    assertions:
      - type: llm-grader
        target: llm
        prompt: Is the answer polite?
"""


@pytest.fixture
def llm() -> Iterator[FakeLlmServer]:
    with FakeLlmServer(lambda call: "30 days, yes") as server:
        yield server


def _project(root: Path, llm: FakeLlmServer, *, judged: bool = False) -> Project:
    """A keyless eval (the mock target) and a keyed one (an OpenAI-compatible model reading its key
    from OPENAI_API_KEY), on the PR's branch."""
    project = Project(root)
    files = {
        ".agentv/targets.yaml": "targets:\n  - name: default\n    provider: mock\n"
        f"  - name: llm\n    provider: openai\n    model: gpt-4o-mini\n    base_url: {llm.base_url}\n"
        "    max_retries: 0\n",
        "evals/geo.eval.yaml": PASSING,
        "evals/support.eval.yaml": KEYED_EVAL,
    }
    if judged:
        files["evals/judged.eval.yaml"] = JUDGED_EVAL
    project.commit(files, "a keyed eval")
    return project


def _env(project: Project, github: FakeGitHub, event: Path, name: str = "pull_request") -> dict[str, str]:
    env = project.env(github, event, name, paths="evals", changed_only="false")
    env.pop("OPENAI_API_KEY", None)  # GitHub withholds secrets from a fork's pull_request
    return env


def _rows(repo: Path) -> dict[str, dict[str, Any]]:
    lines = (repo / ".agentv-ci/results/index.jsonl").read_text(encoding="utf-8").splitlines()
    return {f"{r['suite']}/{r['test_id']}": r for r in map(json.loads, lines)}


def test_a_fork_pr_runs_the_keyless_tests_and_is_inconclusive_about_the_keyed_ones(
    tmp_path: Path, llm: FakeLlmServer, github_server: FakeGitHub
) -> None:
    project = _project(tmp_path, llm)
    event = project.event(head_repo="mallory/demo")

    done = run_action(_env(project, github_server, event), project.root)

    output = done.stdout + done.stderr
    assert done.returncode == 3, output
    assert "Traceback" not in output and "needs an API key" not in output
    rows = _rows(project.repo)
    assert rows["geo/capital"]["execution_status"] == "ok" and rows["geo/capital"]["verdict"] == "pass"
    for key in ("support/refund", "support/shipping"):
        row = rows[key]
        assert (row["execution_status"], row["failure_reason_code"]) == ("not_run", "needs_secret")
        assert row["missing_secret"] == "OPENAI_API_KEY"
        assert "OPENAI_API_KEY" in row["error"]
    assert llm.calls == []  # nothing was sent without a key
    headline = "2 tests need a secret a fork's pull request does not get (OPENAI_API_KEY)"
    assert "RESULT: INCONCLUSIVE: 2/4 tests passed (2 not run), mean score 1.000 - " + headline in done.stdout
    assert (
        "a maintainer can run them" in done.stdout
        and "docs/github.md#tests-that-need-a-secret" in done.stdout
    )
    results = project.repo / ".agentv-ci/results"
    summary = json.loads((results / "summary.json").read_text(encoding="utf-8"))
    assert summary["not_run"] == 2
    assert json.loads((results / "pull_request.json").read_text(encoding="utf-8"))["number"] == 7
    step_summary = (project.root / "files" / "summary.md").read_text(encoding="utf-8")
    in_markdown = headline.replace("_", "\\_")  # escaped, as every text in the summary
    assert "**agentv-ci: INCONCLUSIVE: 2/4 tests passed (2 not run)" in step_summary
    assert in_markdown in step_summary and "a maintainer can run them" in step_summary
    assert project.outputs()["verdict"] == "inconclusive"
    assert github_server.comments_on(7) == []  # a fork's token is read-only: the comment is skipped
    assert "the pull request comes from a fork" in done.stdout

    # The fork-safe comment workflow posts the same headline from the uploaded results.
    artifact = project.root / "artifact"
    results.rename(artifact)
    head = git(project.repo, "rev-parse", "HEAD")
    github_server.add_pull(7, head_sha=head)
    run_event = project.root / "workflow_run.json"
    run_event.write_text(json.dumps({"workflow_run": {"id": 5, "event": "pull_request", "head_sha": head}}))
    env = project.env(github_server, run_event, name="workflow_run", results=str(artifact))

    commented = run_action(env, project.root)

    assert commented.returncode == 3, commented.stdout + commented.stderr
    [comment] = github_server.comments_on(7)
    assert "INCONCLUSIVE" in comment.body and in_markdown in comment.body


def test_a_judge_that_needs_a_key_leaves_its_tests_not_run_on_a_fork_pr(
    tmp_path: Path, llm: FakeLlmServer, github_server: FakeGitHub
) -> None:
    project = _project(tmp_path, llm, judged=True)
    event = project.event(head_repo="mallory/demo")

    done = run_action(_env(project, github_server, event), project.root)

    assert done.returncode == 3, done.stdout + done.stderr
    row = _rows(project.repo)["judged/tone"]
    assert (row["execution_status"], row["failure_reason_code"]) == ("not_run", "needs_secret")
    assert row["missing_secret"] == "OPENAI_API_KEY"
    assert "3 tests need a secret" in done.stdout
    assert llm.calls == []


def test_a_same_repository_pr_without_its_key_is_still_bad_input(
    tmp_path: Path, llm: FakeLlmServer, github_server: FakeGitHub
) -> None:
    """A branch of the repository gets its secrets: a key missing there is a misconfigured workflow."""
    project = _project(tmp_path, llm)

    done = run_action(_env(project, github_server, project.event()), project.root)

    assert done.returncode == 2, done.stdout + done.stderr
    assert "needs an API key" in done.stderr and "OPENAI_API_KEY" in done.stderr
