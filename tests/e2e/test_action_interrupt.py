"""`agentv-ci action` stopped mid-run by SIGINT or SIGTERM (a cancelled job, `timeout-minutes`): the
real entry point in a subprocess, a real cli agent that hangs on one test, the fake GitHub API. The
step leaves what `agentv-ci run` leaves (not-run rows, JUnit, Markdown, summary.json), plus the step
summary, the outputs and the PR comment, all saying it is incomplete, and exits 130."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.e2e.scaffold import Project, run_action
from tests.fakes.github_server import FakeGitHub

AGENT = """
import json, os, sys, time
prompt = open(sys.argv[1]).read()
if "slow" in prompt and os.path.exists(os.path.join(os.path.dirname(os.path.abspath(__file__)), "SLOW")):
    time.sleep(60)
json.dump({"text": "fast answer"}, open(sys.argv[2], "w"))
"""
GRADERS = "    assertions:\n      - type: contains\n        value: fast\n"
INCOMPLETE = "incomplete: 1 of 4 tests did not run"


def _project(root: Path) -> Project:
    """The demo repository whose PR adds a cli agent and an eval of 4 tests, one of which (`slow`)
    hangs while the file SLOW exists."""
    project = Project(root)
    agent = project.repo / "agent.py"
    tests = "".join(f"  - id: fast-{i}\n    input: quick {i}\n{GRADERS}" for i in range(3))
    tests += f"  - id: slow\n    input: slow one\n{GRADERS}"
    project.commit(
        {
            "agent.py": AGENT,
            ".agentv/targets.yaml": "targets:\n  - name: default\n    provider: cli\n"
            f"    command: {sys.executable} {agent} {{PROMPT_FILE}} {{OUTPUT_FILE}}\n",
            "evals/s.eval.yaml": f"name: s\ntests:\n{tests}",
        }
    )
    return project


def _env(project: Project, github: FakeGitHub) -> dict[str, str]:
    return project.env(github, project.event(), paths="evals/s.eval.yaml", workers="4")


def _rows(index: Path) -> int:
    return len(index.read_bytes().splitlines()) if index.exists() else 0


def _interrupt(env: dict[str, str], cwd: Path, index: Path, sig: signal.Signals) -> tuple[int, str, float]:
    """Start the Action, send `sig` once 3 rows are written: (exit code, stdout + stderr, seconds
    from the signal to the exit)."""
    process = subprocess.Popen(
        [sys.executable, "-c", "from agentv_ci.__main__ import action_main; action_main()"],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and _rows(index) < 3 and process.poll() is None:
        time.sleep(0.02)
    assert process.poll() is None, "the step ended before it could be stopped"
    time.sleep(0.2)  # the slow test is in flight
    process.send_signal(sig)
    signalled = time.monotonic()
    stdout, stderr = process.communicate(timeout=60)
    return process.returncode, stdout + stderr, time.monotonic() - signalled


def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentv_ci", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_action_reports_incomplete_everywhere_and_exits_130(
    tmp_path: Path, github_server: FakeGitHub, sig: signal.Signals
) -> None:
    project = _project(tmp_path)
    env = _env(project, github_server)
    results = project.repo / ".agentv-ci" / "results"
    first = run_action(env, project.root)  # a whole run first: its comment is the one updated
    assert first.returncode == 0, first.stdout + first.stderr
    [comment] = github_server.comments_on(7)
    assert "PASSED" in comment.body
    shutil.rmtree(results)  # a new job: a fresh checkout
    (project.root / "files" / "output").unlink()
    (project.root / "files" / "summary.md").unlink()
    (project.repo / "SLOW").write_text("the slow test hangs\n")

    code, output, _ = _interrupt(env, project.root, results / "index.jsonl", sig)

    assert code == 130, output
    assert INCOMPLETE in output
    summary = json.loads((results / "summary.json").read_text())
    assert summary["interrupted"] is True
    assert (summary["planned"], summary["finished"], summary["not_run"]) == (4, 3, 1)
    cases = list(ET.parse(results / "junit.xml").getroot().iter("testcase"))
    assert len(cases) == 4
    [skipped] = [c for c in cases if c.find("skipped") is not None]
    assert skipped.get("name") == "slow [default]"
    assert "interrupted" in (skipped.find("skipped").get("message") or "")  # type: ignore[union-attr]
    assert INCOMPLETE in (results / "summary.md").read_text()
    assert INCOMPLETE in (project.root / "files" / "summary.md").read_text()  # the step summary
    outputs = project.outputs()
    assert outputs["verdict"] == "inconclusive"
    assert INCOMPLETE in outputs["verdict_text"]
    assert (outputs["passed"], outputs["not_run"]) == ("3", "1")
    assert outputs["junit_path"] == ".agentv-ci/results/junit.xml"
    [updated] = github_server.comments_on(7)  # the sticky comment, edited
    assert updated.id == comment.id
    assert INCOMPLETE in updated.body
    assert "PASSED" not in updated.body
    assert outputs["comment_url"].endswith(str(comment.id))

    done = _cli(project.repo, "report", ".agentv-ci/results")
    assert done.returncode == 3, done.stdout + done.stderr
    assert INCOMPLETE in done.stdout


@pytest.mark.slow
def test_a_hanging_comment_api_does_not_hold_an_interrupted_action(
    tmp_path: Path, github_server: FakeGitHub
) -> None:
    from agentv_ci.action.interrupted import COMMENT_SECONDS

    project = _project(tmp_path)
    (project.repo / "SLOW").write_text("the slow test hangs\n")
    github_server.drip_next(path="/issues/7/comments", interval_s=20)  # a hanging API
    results = project.repo / ".agentv-ci" / "results"

    code, output, took = _interrupt(
        _env(project, github_server), project.root, results / "index.jsonl", signal.SIGTERM
    )

    assert code == 130, output
    assert took < COMMENT_SECONDS + 8, f"{took:.1f} s after SIGTERM"
    assert "PR comment not updated: time is up" in output
    assert github_server.comments_on(7) == []
    outputs = project.outputs()  # written before the comment was tried
    assert outputs["verdict"] == "inconclusive"
    assert INCOMPLETE in outputs["verdict_text"]
    assert outputs["comment_url"] == ""
    assert json.loads((results / "summary.json").read_text())["not_run"] == 1
    assert _cli(project.repo, "report", ".agentv-ci/results").returncode == 3


def test_a_second_signal_ends_the_comment_at_once(tmp_path: Path, github_server: FakeGitHub) -> None:
    project = _project(tmp_path)
    (project.repo / "SLOW").write_text("the slow test hangs\n")
    github_server.drip_next(path="/issues/7/comments", interval_s=20)  # a hanging API
    results = project.repo / ".agentv-ci" / "results"
    process = subprocess.Popen(
        [sys.executable, "-c", "from agentv_ci.__main__ import action_main; action_main()"],
        cwd=project.root,
        env=_env(project, github_server),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and _rows(results / "index.jsonl") < 3 and process.poll() is None:
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)  # the runner's first signal on cancel
    while time.monotonic() < deadline and not github_server.calls("GET", "/issues/7/comments"):
        time.sleep(0.02)  # the reports are written and the comment has started
    process.send_signal(signal.SIGTERM)  # ... and its second
    signalled = time.monotonic()
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stdout + stderr
    assert time.monotonic() - signalled < 3
    assert "PR comment not updated: SIGTERM received" in stdout + stderr
    assert project.outputs()["verdict"] == "inconclusive"


def test_an_action_interrupted_while_its_baseline_runs_is_inconclusive_not_passed(
    tmp_path: Path, github_server: FakeGitHub
) -> None:
    # base: an agent whose `slow` test hangs (and says when it started); the PR fixes it
    marker = tmp_path / "base-slow-started"
    hanging = AGENT.replace(
        'os.path.exists(os.path.join(os.path.dirname(os.path.abspath(__file__)), "SLOW"))', "True"
    )
    hanging = hanging.replace(
        "    time.sleep(60)", f"    open({str(marker)!r}, 'w').close()\n    time.sleep(60)"
    )
    project = Project(tmp_path)
    tests = "".join(f"  - id: fast-{i}\n    input: quick {i}\n{GRADERS}" for i in range(3))
    tests += f"  - id: slow\n    input: slow one\n{GRADERS}"
    project.commit(
        {
            "agent.py": hanging,
            ".agentv/targets.yaml": "targets:\n  - name: default\n    provider: cli\n"
            f"    command: {sys.executable} ../agent.py {{PROMPT_FILE}} {{OUTPUT_FILE}}\n",
            "evals/s.eval.yaml": f"name: s\ntests:\n{tests}",
        }
    )
    subprocess.run(["git", "-C", str(project.repo), "branch", "-f", "main"], check=True)
    project.base = subprocess.run(
        ["git", "-C", str(project.repo), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    project.commit({"agent.py": AGENT})  # no SLOW file: nothing hangs at the head
    env = project.env(
        github_server,
        project.event(),
        paths="evals/s.eval.yaml",
        changed_only="false",
        baseline_ref="merge-base",
        workers="4",
    )
    process = subprocess.Popen(
        [sys.executable, "-c", "from agentv_ci.__main__ import action_main; action_main()"],
        cwd=project.root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not marker.exists() and process.poll() is None:
        time.sleep(0.02)
    assert process.poll() is None, "the step ended before its baseline run hung"
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=60)

    assert process.returncode == 130, stdout + stderr
    results = project.repo / ".agentv-ci" / "results"
    summary = json.loads((results / "summary.json").read_text())
    assert (summary["planned"], summary["finished"], summary["not_run"]) == (4, 4, 0)  # the PR's run is whole
    reason = "interrupted: the baseline did not finish"
    outputs = project.outputs()
    assert outputs["verdict"] == "inconclusive"
    assert reason in outputs["verdict_text"]
    assert reason in (results / "summary.md").read_text()
    [comment] = github_server.comments_on(7)
    assert reason in comment.body
    assert "PASSED" not in comment.body


def test_an_interrupted_run_says_why_its_baseline_was_not_compared_next_to_the_selection(
    tmp_path: Path, github_server: FakeGitHub
) -> None:
    """One step: `baseline_ref: merge-base`, a change that selects the eval plus one that selects
    nothing, and a SIGTERM while the run is in flight. The comment says it is incomplete, why no
    baseline was compared (not a bare `-`), why the eval ran and which file selected nothing."""
    project = _project(tmp_path)
    project.commit({"README.md": "how to run the agent\n"})
    (project.repo / "SLOW").write_text("the slow test hangs\n")
    env = project.env(
        github_server, project.event(), paths="evals/s.eval.yaml", workers="4", baseline_ref="merge-base"
    )
    results = project.repo / ".agentv-ci" / "results"

    code, output, _ = _interrupt(env, project.root, results / "index.jsonl", signal.SIGTERM)

    assert code == 130, output
    why = "baseline_ref: merge-base: not compared: the run was interrupted before it"
    assert why in output  # the log
    assert json.loads((results / "summary.json").read_text())["baseline"]["reason"] == why
    [comment] = github_server.comments_on(7)
    body = comment.body
    assert INCOMPLETE in body
    shown = f"**No baseline:** {why.replace('_', chr(92) + '_')}."  # Markdown-escaped
    assert shown in body
    assert "Why these evals ran (1)" in body and "- `evals/s.eval.yaml`: eval file added" in body
    assert "Changed files that selected no eval (1):" in body and "- `README.md`" in body
    assert shown in (results / "summary.md").read_text()
