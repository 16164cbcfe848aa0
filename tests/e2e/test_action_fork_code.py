"""On `pull_request_target` (the base's secrets and write token) the Action refuses to run a fork's
checked-out eval files, which would run the fork's scripts with those secrets."""

from __future__ import annotations

from tests.e2e.test_action import Project, _git, project, run_action
from tests.fakes.github_server import FakeGitHub

__all__ = ["project"]  # the fixture, shared with test_action


def test_a_forks_checked_out_code_is_refused_on_pull_request_target(
    project: Project, github_server: FakeGitHub
) -> None:
    project.commit({"evals/geo.eval.yaml": "tests:\n  - id: x\n    input: hi\n    criteria: y\n"})
    event = project.event(head_repo="mallory/demo")
    env = project.env(github_server, event, name="pull_request_target")
    refused = run_action(env, project.root)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "refusing to run the eval files of fork mallory/demo" in refused.stderr
    assert "trust_fork_code" in refused.stderr
    assert not (project.repo / ".agentv-ci" / "results" / "index.jsonl").exists()

    trusted = run_action({**env, "INPUT_TRUST_FORK_CODE": "true"}, project.root)
    assert trusted.returncode == 0, trusted.stdout + trusted.stderr


def test_the_base_checkout_and_same_repository_prs_are_not_refused(
    project: Project, github_server: FakeGitHub
) -> None:
    project.commit({"README.md": "changed\n"})
    fork_event = project.event(head_repo="mallory/demo")
    same_repo = project.env(github_server, project.event(), name="pull_request_target")
    assert run_action(same_repo, project.root).returncode == 0
    _git(project.repo, "checkout", "-q", "main")  # the default checkout of pull_request_target
    base = project.env(github_server, fork_event, name="pull_request_target")
    done = run_action(base, project.root)
    assert "refusing" not in done.stderr
    assert done.returncode == 0, done.stdout + done.stderr
