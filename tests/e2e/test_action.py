"""`agentv-ci action` end to end: a subprocess in a real git repository with base and head commits,
a `pull_request` event file and the fake GitHub REST server on 127.0.0.1 (the scaffold is
tests/e2e/scaffold.py)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from tests.e2e.scaffold import FAILING, TOKEN, Project, project, run_action
from tests.fakes.github_server import FakeGitHub
from tests.git_repos import git

__all__ = ["project"]  # the repository fixture of tests/e2e/scaffold.py


def _every_byte_written(project: Project, done: subprocess.CompletedProcess[str]) -> str:
    chunks = [done.stdout, done.stderr]
    for path in [*project.repo.joinpath(".agentv-ci").rglob("*"), *(project.root / "files").rglob("*")]:
        if path.is_file():
            chunks.append(path.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(chunks)


def test_pull_request_runs_the_affected_eval_comments_once_and_sets_outputs(
    project: Project, github_server: FakeGitHub
) -> None:
    project.commit({"evals/math.eval.yaml": FAILING})
    env = project.env(github_server, project.event())

    first = run_action(env, project.root)

    assert first.returncode == 1, first.stdout + first.stderr
    assert "selected 1 of 2 eval file(s)" in first.stdout
    assert "evals/math.eval.yaml: eval file changed" in first.stdout
    rows = [
        json.loads(line)
        for line in (project.repo / ".agentv-ci/results/index.jsonl").read_text().splitlines()
    ]
    assert [(r["suite"], r["test_id"], r["execution_status"]) for r in rows] == [
        ("math", "add", "quality_failure")
    ]
    # One annotation at the failing test's file and line.
    assert re.search(r"^::error file=evals/math\.eval\.yaml,line=2[,:]", first.stdout, re.M), first.stdout
    comments = github_server.comments_on(7)
    assert len(comments) == 1
    assert comments[0].author == FakeGitHub.BOT
    assert "agentv-ci:sticky-comment" in comments[0].body
    assert "FAILED" in comments[0].body
    assert "https://github.example/octo/demo/actions/runs/99" in comments[0].body
    outputs = project.outputs()
    assert outputs["verdict"] == "failed"
    assert (outputs["passed"], outputs["failed"], outputs["errors"]) == ("0", "1", "0")
    assert outputs["results_path"] == ".agentv-ci/results/index.jsonl"
    assert outputs["junit_path"] == ".agentv-ci/results/junit.xml"
    assert outputs["sarif_path"] == ".agentv-ci/results/results.sarif"
    assert outputs["comment_url"].endswith(f"#issuecomment-{comments[0].id}")
    assert (project.repo / outputs["junit_path"]).is_file()
    assert (project.repo / outputs["sarif_path"]).is_file()
    step_summary = (project.root / "files" / "summary.md").read_text()
    assert "| math |" in step_summary

    # The second run edits the same comment, through a 502 and a rate limit.
    project.commit({"evals/math.eval.yaml": FAILING.replace('"5"', '"4"')}, "fix")
    github_server.fail_next(502, path="/comments")
    github_server.rate_limit_next(reset_in=0)
    second = run_action(env, project.root)

    assert second.returncode == 0, second.stdout + second.stderr
    comments = github_server.comments_on(7)
    assert len(comments) == 1, [c.body[:80] for c in comments]
    assert "PASSED" in comments[0].body
    assert len(github_server.calls("PATCH", "/comments")) == 1
    assert project.outputs()["verdict"] == "passed"

    # The token is printed once, in the ::add-mask:: command the runner consumes, and nowhere else.
    for done in (first, second):
        written = _every_byte_written(project, done)
        assert written.count(TOKEN) == 1
        assert f"::add-mask::{TOKEN}" in done.stdout


def test_a_fork_pull_request_posts_nothing_and_still_reports(
    project: Project, github_server: FakeGitHub
) -> None:
    project.commit({"evals/math.eval.yaml": FAILING})
    env = project.env(github_server, project.event(head_repo="someone/demo"))

    done = run_action(env, project.root)

    assert done.returncode == 1
    assert github_server.calls("POST") == [] and github_server.calls("PATCH") == []
    assert "::notice title=agentv-ci::PR comment skipped: the pull request comes from a fork" in done.stdout
    outputs = project.outputs()
    assert outputs["verdict"] == "failed" and outputs["comment_url"] == ""
    assert "| math |" in (project.root / "files" / "summary.md").read_text()
    record = json.loads((project.repo / ".agentv-ci/results/pull_request.json").read_text())
    assert record["number"] == 7


def test_a_change_that_affects_no_eval_is_green_and_says_so(
    project: Project, github_server: FakeGitHub
) -> None:
    project.commit({"README.md": "more docs\n"})
    env = project.env(github_server, project.event())

    done = run_action(env, project.root)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "No eval is affected by the changes" in done.stdout
    assert project.outputs()["verdict"] == "skipped"
    assert (project.repo / ".agentv-ci/results/index.jsonl").read_text() == ""
    assert (project.repo / ".agentv-ci/results/junit.xml").is_file()
    assert github_server.comments_on(7) == []  # no comment to say nothing ran (none to update)


def test_push_runs_every_eval(project: Project, github_server: FakeGitHub) -> None:
    project.commit({"evals/math.eval.yaml": FAILING})
    env = project.env(github_server, project.event(name="push"), name="push")

    done = run_action(env, project.root)

    assert done.returncode == 1
    suites = sorted(
        json.loads(line)["suite"]
        for line in (project.repo / ".agentv-ci/results/index.jsonl").read_text().splitlines()
    )
    assert suites == ["geo", "math"]
    assert github_server.calls("POST") == []  # nothing to comment on


def test_gates_from_inputs_decide_the_exit_code(project: Project, github_server: FakeGitHub) -> None:
    project.commit({"evals/math.eval.yaml": FAILING})
    env = project.env(github_server, project.event(), changed_only="false", threshold="0", comment="false")

    # A per-test bar of 0: the failing answer (score 0) passes it.
    done = run_action(env, project.root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (project.outputs()["passed"], project.outputs()["pass_rate"]) == ("2", "1")

    # The mean-score gate still sees the 0.
    done = run_action({**env, "INPUT_MIN_MEAN_SCORE": "0.9"}, project.root)
    assert done.returncode == 1
    assert "mean score" in done.stdout and project.outputs()["verdict"] == "failed"
    assert github_server.requests == []  # comment: false


def test_dry_run_input_behaves_as_the_cli_dry_run(project: Project, github_server: FakeGitHub) -> None:
    project.commit({"evals/math.eval.yaml": FAILING})
    env = project.env(github_server, project.event(), changed_only="false", dry_run="true", comment="false")

    # Placeholder answers fail the `contains "5"` check: reported, not gated.
    done = run_action(env, project.root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "RESULT: PASSED (dry run)" in done.stdout and "not gated" in done.stdout
    assert not re.search(r"^::error ", done.stdout, re.M)  # a red annotation would be a false alarm
    assert project.outputs()["verdict"] == "passed"

    # An unknown target is bad input in a dry run too, before anything runs.
    done = run_action({**env, "INPUT_TARGET": "gtp4"}, project.root)
    assert done.returncode == 2
    assert "unknown target 'gtp4'" in done.stderr + done.stdout
    assert project.outputs()["verdict"] == "error"


def test_a_typo_in_an_input_is_bad_input(project: Project, github_server: FakeGitHub) -> None:
    env = project.env(github_server, project.event(), threshold="high")

    done = run_action(env, project.root)

    assert done.returncode == 2
    assert "input `threshold` must be a number between 0 and 1, got 'high'" in done.stderr
    assert "Traceback" not in done.stderr
    assert "::error title=agentv-ci::input `threshold` must be" in done.stdout
    assert project.outputs() == {"verdict": "error"}


def test_args_given_to_the_container_are_refused_with_a_hint(
    project: Project, github_server: FakeGitHub
) -> None:
    env = project.env(github_server, project.event())
    done = run_action(env, project.root, "--dry-run")
    assert done.returncode == 2
    assert "takes no arguments" in done.stderr and "with: {dry_run: true" in done.stderr


def test_workflow_run_comments_for_a_fork_from_the_artifact(
    project: Project, github_server: FakeGitHub
) -> None:
    head = project.commit({"evals/math.eval.yaml": FAILING})
    fork_env = project.env(github_server, project.event(head_repo="someone/demo"), comment="false")
    assert run_action(fork_env, project.root).returncode == 1
    artifact = project.root / "artifact"
    (project.repo / ".agentv-ci/results").rename(artifact)
    github_server.add_pull(7, head_sha=head)
    event = project.root / "workflow_run.json"
    event.write_text(json.dumps({"workflow_run": {"id": 5, "event": "pull_request", "head_sha": head}}))
    env = project.env(github_server, event, name="workflow_run", results=str(artifact))

    done = run_action(env, project.root)

    assert done.returncode == 1, done.stdout + done.stderr
    [comment] = github_server.comments_on(7)
    assert "FAILED" in comment.body

    # An artifact naming a PR whose head is not the tested commit is not trusted.
    github_server.add_pull(8, head_sha="0" * 40)
    record = artifact / "pull_request.json"
    record.write_text(json.dumps({"number": 8, "head_sha": head}))
    done = run_action(env, project.root)
    assert "is not the one the triggering run tested" in done.stdout
    assert github_server.comments_on(8) == []


AGENT_TARGETS = """\
targets:
  - name: default
    provider: cli
    command: python3 agent.py {OUTPUT_FILE}
    cwd: ..
"""
MATH_EVAL = """\
tests:
  - id: add
    input: What is 2 + 2?
    assertions:
      - type: equals
        value: "4"
  - id: double
    input: What is 2 * 2?
    assertions:
      - type: contains
        value: "4"
"""


def test_baseline_ref_reruns_the_merge_base_and_reports_the_regression(tmp_path: Path) -> None:
    """The agent's code changes, the eval does not: the baseline re-run at the merge-base answers
    as before, so the drop is a regression (not a `changed` definition) and the gate fails."""
    with FakeGitHub() as github:
        project = Project(tmp_path)
        project.commit(
            {
                ".agentv/targets.yaml": AGENT_TARGETS,
                "agent.py": "import sys\nopen(sys.argv[1], 'w').write('4')\n",
                "evals/math.eval.yaml": MATH_EVAL,
            },
            "an agent",
        )
        git(project.repo, "checkout", "-q", "main")
        git(project.repo, "merge", "-q", "--ff-only", "feature")
        project.base = git(project.repo, "rev-parse", "HEAD")
        git(project.repo, "checkout", "-q", "feature")
        project.commit({"agent.py": "import sys\nopen(sys.argv[1], 'w').write('four')\n"}, "agent regresses")
        env = project.env(
            github,
            project.event(),
            paths="evals",
            select_all_on="agent.py",
            baseline_ref="merge-base",
            max_regression="0.1",
        )

        done = run_action(env, project.root)

        assert done.returncode == 1, done.stdout + done.stderr
        assert "agent.py changed (select_all_on): all evals selected" in done.stdout
        summary = (project.repo / ".agentv-ci/results/summary.md").read_text()
        assert "broken" in summary and "math" in summary
        [comment] = github.comments_on(7)
        assert "broken" in comment.body
        assert "regress" in done.stdout.lower() or "broke" in done.stdout.lower()
        # The worktree used for the baseline is gone again.
        worktrees = git(project.repo, "worktree", "list")
        assert len(worktrees.splitlines()) == 1, worktrees
