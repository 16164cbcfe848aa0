"""The Action's reports people act on: the sticky comment shows each failed check's expected and
actual values (cut to fit its size budget), and with `html_report: true` the step writes the HTML
report and the comment links the run's artifacts. Through `agentv-ci-action` in a subprocess, a real
git repository and the fake GitHub API (tests/e2e/scaffold.py)."""

from __future__ import annotations

import json

from tests.e2e.scaffold import Project, project, run_action
from tests.fakes.github_server import FakeGitHub

__all__ = ["project"]  # the repository fixture of tests/e2e/scaffold.py

ARTIFACTS = "https://github.example/octo/demo/actions/runs/99#artifacts"
WRONG = json.dumps({"quantity": 5, "sku": "A-1"})
TARGETS = (
    "targets:\n  - name: default\n    provider: mock\n"
    f"  - name: wrong\n    provider: mock\n    response: {json.dumps(WRONG)}\n"
)
ORDER_EVAL = """\
execution:
  target: wrong
tests:
  - id: order
    input: how many?
    expected_output: '{"quantity": 3, "sku": "A-1"}'
    assertions:
      - type: field-accuracy
        name: fields
        fields:
          - path: quantity
          - path: sku
"""


def _failing_order(project: Project) -> None:
    project.commit({".agentv/targets.yaml": TARGETS, "evals/order.eval.yaml": ORDER_EVAL})


def test_the_comment_shows_expected_and_actual_and_links_the_html_report(
    project: Project, github_server: FakeGitHub
) -> None:
    _failing_order(project)
    env = project.env(github_server, project.event(), html_report="true")

    done = run_action(env, project.root)

    assert done.returncode == 1, done.stdout + done.stderr
    [comment] = github_server.comments_on(7)
    assert "x quantity (value mismatch)\n      expected: 3\n      actual:   5" in comment.body
    assert f"[HTML report]({ARTIFACTS})" in comment.body
    page = (project.repo / ".agentv-ci/results/report.html").read_text(encoding="utf-8")
    assert "<!DOCTYPE html>" in page[:200] or "<!doctype html>" in page[:200].lower()
    assert "expected: 3" in page and "actual: 5" in page
    assert project.outputs()["html_path"] == ".agentv-ci/results/report.html"
    # JUnit's failure message leads with the mismatch
    junit = (project.repo / ".agentv-ci/results/junit.xml").read_text(encoding="utf-8")
    assert 'message="quantity: expected 3, got 5; score 0.500 &lt; threshold 0.80"' in junit


def test_without_the_input_no_page_is_written_or_linked(project: Project, github_server: FakeGitHub) -> None:
    _failing_order(project)
    stale = project.repo / ".agentv-ci/results/report.html"
    env = project.env(github_server, project.event())

    done = run_action(env, project.root)

    assert done.returncode == 1, done.stdout + done.stderr
    [comment] = github_server.comments_on(7)
    assert "expected: 3" in comment.body  # the values are there either way
    assert "HTML report" not in comment.body and "#artifacts" not in comment.body
    assert not stale.exists()
    assert project.outputs()["html_path"] == ""


def test_many_long_failures_are_cut_to_fit_the_comment(project: Project, github_server: FakeGitHub) -> None:
    fields = [f"f{i}" for i in range(8)]
    answer = json.dumps({name: f"{name}-" + "a" * 600 for name in fields})
    expected = json.dumps({name: f"{name}-" + "b" * 600 for name in fields})
    targets = f"targets:\n  - name: default\n    provider: mock\n    response: {json.dumps(answer)}\n"
    tests = "".join(
        f"  - id: t{i:02d}\n    input: case {i} {'x' * 600}\n    expected_output: {json.dumps(expected)}\n"
        "    assertions:\n      - type: field-accuracy\n        name: fields\n        fields:\n"
        + "".join(f"          - path: {name}\n" for name in fields)
        for i in range(30)
    )
    project.commit({".agentv/targets.yaml": targets, "evals/long.eval.yaml": f"tests:\n{tests}"})
    env = project.env(github_server, project.event())

    done = run_action(env, project.root)

    assert done.returncode == 1, done.stdout + done.stderr
    [comment] = github_server.comments_on(7)
    body = comment.body
    assert len(body.encode("utf-8")) <= 60_000
    assert body.startswith("❌") or "FAILED" in body.splitlines()[0]
    # the first tests' failed checks keep their field, expected and actual, each value cut short
    assert 'x f0 (value mismatch)\n      expected: "f0-bbbb' in body
    assert '      actual:   "f0-aaaa' in body
    assert "chars cut]" in body
    assert "b" * 600 not in body  # the expected values appear only cut (the answer's own excerpt is whole)
    assert all(len(line) < 200 for line in body.splitlines() if line.startswith("      actual:"))
    # whole tests are left out to fit, and the comment says so
    assert "more failing test(s) not shown" in body
    assert "agentv-ci:sticky-comment" in body
