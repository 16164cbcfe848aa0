"""`agentv-ci action` when `baseline: auto` finds no artifact, and when a PR selects no eval (issue 28).

- No artifact can be listed (403, 404, 500 from the API, or none there): the committed
  `<eval>.baseline.jsonl` sidecars are the baseline, so a regression still fails the job.
- No baseline at all: the line right under the verdict says the regression gate was not applied, and
  why (the comment, the step summary), not only a log warning.
- A docs-only PR: `verdict=skipped` with a `verdict_text` that says so; an existing sticky comment is
  updated to say nothing ran, and a PR that never had one gets none.

Real git repositories, the CLI in a subprocess, a cli agent in a subprocess and the fake GitHub API.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.scaffold import FAILING, Project, run_action
from tests.e2e.test_action_sidecar import SIDECAR, _with_cli_agent_and_sidecar
from tests.e2e.test_sidecar_baselines import WORSE
from tests.fakes.github_server import FakeGitHub

NOT_LISTED = {
    403: "could not list the 'agentv-ci-results' artifacts: GitHub API GET",
    404: "could not list the 'agentv-ci-results' artifacts: GitHub API GET",
    500: "could not list the 'agentv-ci-results' artifacts: GitHub API GET",
    None: "no unexpired 'agentv-ci-results' artifact from a run on 'main' in octo/demo",
}


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def _no_artifact_list(github: FakeGitHub, status: int | None) -> None:
    """The artifact listing answers `status` every time (None: it answers, with no artifact)."""
    if status is not None:  # `retry-after: 0`: the client's retries of a 500 wait no real time
        github.fail_next(status, times=10, path="/actions/artifacts", headers={"retry-after": "0"})


@pytest.mark.parametrize("status", [403, 404, 500, None], ids=["403", "404", "500", "none-found"])
def test_baseline_auto_without_an_artifact_falls_back_to_the_committed_sidecar(
    project: Project, github_server: FakeGitHub, status: int | None
) -> None:
    _with_cli_agent_and_sidecar(project)
    project.commit({"answer.txt": WORSE}, "a worse agent")
    _no_artifact_list(github_server, status)
    env = project.env(
        github_server, project.event(), changed_only="false", baseline="auto", max_regression="0.1"
    )

    done = run_action(env, project.root)

    assert done.returncode == 1, done.stdout + done.stderr  # the regression is caught
    assert "geo/words [agent]: regressed vs baseline (1.000 -> 0.500)" in done.stdout
    why = NOT_LISTED[status]
    log = done.stdout + done.stderr
    assert f"::warning title=agentv-ci::baseline: auto: {why}" in log
    assert "using the committed sidecars instead" in log
    assert f"baseline: committed sidecar {SIDECAR} (fallback: baseline: auto: {why}" in log
    assert "max_regression is not applied" not in log
    [comment] = github_server.comments_on(7)
    assert "FAILED" in comment.body and "regressed" in comment.body
    assert f"**Baseline:** committed sidecar `{SIDECAR}` (fallback: baseline: auto: {why}" in comment.body
    assert "Regression gate not applied" not in comment.body
    recorded = json.loads((project.repo / ".agentv-ci/results/summary.json").read_text(encoding="utf-8"))
    assert recorded["baseline"]["kind"] == "sidecar" and recorded["baseline"]["files"] == [SIDECAR]
    assert why in recorded["baseline"]["reason"]
    assert project.outputs()["verdict"] == "failed"


def test_no_baseline_at_all_says_under_the_verdict_that_the_regression_gate_was_not_applied(
    project: Project, github_server: FakeGitHub
) -> None:
    project.commit({"evals/math.eval.yaml": FAILING.replace('"5"', '"4"')})
    _no_artifact_list(github_server, 404)
    env = project.env(github_server, project.event(), baseline="auto", max_regression="0.1")

    done = run_action(env, project.root)

    assert done.returncode == 0, done.stdout + done.stderr
    line = (
        "**Regression gate not applied:** no baseline: baseline: auto: could not list the "
        "'agentv-ci-results' artifacts: GitHub API GET"
    )
    [comment] = github_server.comments_on(7)
    verdict, under = comment.body.split("\n\n")[:2]
    assert verdict.startswith("✅ **agentv-ci: PASSED")
    assert under.startswith(line), comment.body
    step_summary = (project.root / "files" / "summary.md").read_text(encoding="utf-8")
    assert step_summary.split("\n\n")[1].startswith(line), step_summary


def _docs_only_outputs_agree(outputs: dict[str, str]) -> None:
    assert outputs["verdict"] == "skipped"
    assert outputs["verdict_text"].startswith("SKIPPED: No eval is affected by the changes since ")
    assert "PASSED" not in outputs["verdict_text"]


def test_a_docs_only_pr_says_skipped_and_gets_no_new_comment(
    project: Project, github_server: FakeGitHub
) -> None:
    project.commit({"README.md": "more docs\n"})

    done = run_action(project.env(github_server, project.event()), project.root)

    assert done.returncode == 0, done.stdout + done.stderr
    outputs = project.outputs()
    _docs_only_outputs_agree(outputs)
    assert outputs["comment_url"] == ""
    assert github_server.comments_on(7) == []
    assert github_server.calls("POST", "/comments") == []
    assert "no earlier comment to update" in done.stdout
    assert "No eval is affected" in (project.root / "files" / "summary.md").read_text(encoding="utf-8")


def test_a_pr_that_no_longer_affects_an_eval_updates_its_comment_to_say_nothing_ran(
    project: Project, github_server: FakeGitHub
) -> None:
    math = (project.repo / "evals" / "math.eval.yaml").read_text(encoding="utf-8")
    project.commit({"evals/math.eval.yaml": FAILING})
    first = run_action(project.env(github_server, project.event()), project.root)
    assert first.returncode == 1, first.stdout + first.stderr
    [comment] = github_server.comments_on(7)
    assert "FAILED" in comment.body
    project.commit({"evals/math.eval.yaml": math, "README.md": "docs only now\n"}, "revert the eval")
    (project.root / "files" / "output").unlink()

    done = run_action(project.env(github_server, project.event()), project.root)

    assert done.returncode == 0, done.stdout + done.stderr
    [updated] = github_server.comments_on(7)  # the same comment, no second one
    assert updated.id == comment.id
    assert "FAILED" not in updated.body  # no stale verdict stays on the PR
    assert "No eval is affected by the changes" in updated.body
    outputs = project.outputs()
    _docs_only_outputs_agree(outputs)
    assert outputs["comment_url"].endswith(str(comment.id))
