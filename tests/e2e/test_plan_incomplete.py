"""A run knows its plan: interrupted (SIGINT, SIGTERM) and killed (SIGKILL) runs of the real CLI, then
`report`, `compare` and `merge` of shards (one interrupted, one missing), each incomplete (exit 3)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from agentv_ci.running.sharding import shard_of
from tests.fakes.github_server import FakeGitHub

AGENT = """
import json, os, sys, time
prompt = open(sys.argv[1]).read()
if "slow" in prompt and os.path.exists(os.path.join(os.path.dirname(os.path.abspath(__file__)), "SLOW")):
    time.sleep(30)
json.dump({"text": "fast answer"}, open(sys.argv[2], "w"))
"""
GRADERS = "    assertions:\n      - type: contains\n        value: fast\n"


def _project(root: Path, fast: list[str], slow: list[str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / ".git").mkdir()
    (root / "agent.py").write_text(AGENT)
    (root / "SLOW").write_text("slow tests hang until this file is removed\n")
    (root / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: cli\n"
        f"    command: {sys.executable} agent.py {{PROMPT_FILE}} {{OUTPUT_FILE}}\n"
    )
    tests = "".join(f"  - id: {name}\n    input: quick {name}\n{GRADERS}" for name in fast)
    tests += "".join(f"  - id: {name}\n    input: slow {name}\n{GRADERS}" for name in slow)
    (root / "s.eval.yaml").write_text(f"name: s\ntests:\n{tests}")
    return root


def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentv_ci", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def _rows(index: Path) -> int:
    return len(index.read_bytes().splitlines()) if index.exists() else 0


def run_until(project: Path, out: Path, rows: int, sig: signal.Signals, *extra: str) -> tuple[int, str]:
    """Start `agentv-ci run`, wait until `rows` rows are written, send `sig` (to the whole process
    group for SIGKILL, as a CI runner's timeout does); (exit code, stdout + stderr)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "agentv_ci", "run", "s.eval.yaml", "-o", str(out), "--workers", "4", *extra],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and _rows(out / "index.jsonl") < rows and process.poll() is None:
        time.sleep(0.02)
    assert process.poll() is None, "the run ended before it could be stopped"
    if sig == signal.SIGKILL:
        os.killpg(process.pid, signal.SIGKILL)
    else:
        process.send_signal(sig)
    stdout, stderr = process.communicate(timeout=60)
    return process.returncode, stdout + stderr


FAST = ["fast-0", "fast-1", "fast-2"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_run_writes_its_reports_and_report_says_incomplete(
    tmp_path: Path, sig: signal.Signals
) -> None:
    project = _project(tmp_path, FAST, ["slow"])
    out = project / "out"
    code, output = run_until(
        project, out, 3, sig, "--junit", str(out / "junit.xml"), "--markdown", str(out / "summary.md")
    )
    assert code == 130, output  # the interrupted run itself still says "interrupted"
    assert "incomplete: 1 of 4 tests did not run" in output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] is True
    assert (summary["planned"], summary["finished"], summary["not_run"]) == (4, 3, 1)
    # JUnit: the test that did not run is a skipped testcase saying why
    cases = {c.get("name"): c for c in ET.parse(out / "junit.xml").getroot().iter("testcase")}
    assert len(cases) == 4
    [skipped] = [c for c in cases.values() if c.find("skipped") is not None]
    assert skipped.get("name") == "slow [default]"
    assert "interrupted" in (skipped.find("skipped").get("message") or "")  # type: ignore[union-attr]
    assert "incomplete: 1 of 4 tests did not run" in (out / "summary.md").read_text()

    done = _cli(project, "report", "out", "--markdown", "again.md")
    assert done.returncode == 3, done.stdout + done.stderr
    assert "INCONCLUSIVE" in done.stdout
    assert "incomplete: 1 of 4 tests did not run" in done.stdout
    assert "incomplete: 1 of 4 tests did not run" in (project / "again.md").read_text()

    # --resume runs only what did not finish (the slow test, now quick), and the run is complete
    (project / "SLOW").unlink()
    resumed = _cli(project, "run", "s.eval.yaml", "-o", "out", "--resume", "-q")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert json.loads((out / "summary.json").read_text())["not_run"] == 0
    assert _cli(project, "report", "out").returncode == 0


def test_a_killed_run_is_reported_from_its_plan_and_compares_as_incomplete(tmp_path: Path) -> None:
    project = _project(tmp_path, FAST, ["slow"])
    code, output = run_until(project, project / "killed", 3, signal.SIGKILL)
    assert code == -signal.SIGKILL, output
    assert not (project / "killed" / "summary.json").exists()  # SIGKILL: nothing written at the end
    assert (project / "killed" / "plan.jsonl").is_file()
    with (project / "killed" / "index.jsonl").open("ab") as index:  # a row cut by the kill mid-write
        index.write(b'{"test_id":"slow","suite":"s","tar')

    done = _cli(project, "report", "killed", "--junit", "j.xml", "--markdown", "m.md")
    assert done.returncode == 3, done.stdout + done.stderr
    assert "incomplete: 1 of 4 tests did not run" in done.stdout
    assert "incomplete: 1 of 4 tests did not run" in (project / "m.md").read_text()
    skipped = [
        c for c in ET.parse(project / "j.xml").getroot().iter("testcase") if c.find("skipped") is not None
    ]
    assert [c.get("name") for c in skipped] == ["slow [default]"]
    assert "no summary.json" in (skipped[0].find("skipped").get("message") or "")  # type: ignore[union-attr]

    # compare: the test the killed run never finished is not comparable (not "removed"), and the
    # comparison is inconclusive
    (project / "SLOW").unlink()
    assert _cli(project, "run", "s.eval.yaml", "-o", "complete", "-q").returncode == 0
    compared = _cli(project, "compare", "complete", "killed", "--format", "json")
    assert compared.returncode == 3, compared.stdout + compared.stderr
    assert "head: incomplete: 1 of 4 tests did not run" in compared.stderr
    statuses = {t["test_id"]: t["status"] for t in json.loads(compared.stdout)["tests"]}
    assert statuses["slow"] == "not comparable"
    assert _cli(project, "compare", "complete", "complete").returncode == 0
    # the killed run as the baseline of a complete, green run: the regression gate cannot pass
    gated = _cli(project, "report", "complete", "--baseline", "killed", "--max-regression", "0.1")
    assert gated.returncode == 3, gated.stdout + gated.stderr
    assert "baseline incomplete: 1 of 4 tests did not run in it" in gated.stdout


def test_a_resume_keeps_the_plan_of_the_run_it_continues(tmp_path: Path) -> None:
    """`--resume` with a narrower selection (`--test-id`) continues the same run: the tests the killed
    run planned and never finished stay planned, so the resumed run is still incomplete, never a
    green `2/2`. A resume as another shard of the selection is refused."""
    project = _project(tmp_path, FAST, ["slow"])
    code, output = run_until(project, project / "out", 3, signal.SIGKILL)
    assert code == -signal.SIGKILL, output
    (project / "SLOW").unlink()

    narrower = _cli(project, "run", "s.eval.yaml", "-o", "out", "--resume", "--test-id", "fast-0", "-q")
    assert narrower.returncode == 3, narrower.stdout + narrower.stderr
    assert "incomplete: 1 of 4 tests did not run" in narrower.stdout
    report = _cli(project, "report", "out")
    assert report.returncode == 3, report.stdout + report.stderr
    assert "incomplete: 1 of 4 tests did not run" in report.stdout

    other_shard = _cli(project, "run", "s.eval.yaml", "-o", "out", "--resume", "--shard", "1/2", "-q")
    assert other_shard.returncode == 2, other_shard.stdout + other_shard.stderr
    assert "--resume" in other_shard.stderr and "shard" in other_shard.stderr

    everything = _cli(project, "run", "s.eval.yaml", "-o", "out", "--resume", "-q")
    assert everything.returncode == 0, everything.stdout + everything.stderr
    assert _cli(project, "report", "out").returncode == 0
    summary = json.loads((project / "out" / "summary.json").read_text())
    assert (summary["planned"], summary["not_run"]) == (4, 0)


def _shard_names() -> tuple[list[str], str, int]:
    """Test ids for 3 shards: shard 2 holds the slow test and at least one quick one; shard 3 at least
    one test. (names, the slow one, how many tests shard 3 has)."""
    names = [f"t-{i:02d}" for i in range(12)]
    shards = {name: shard_of("s", name, 3) for name in names}
    second = [n for n in names if shards[n] == 2]
    assert len(second) >= 2 and any(shards[n] == 3 for n in names) and any(shards[n] == 1 for n in names)
    return names, second[0], sum(1 for n in names if shards[n] == 3)


def test_merge_of_an_interrupted_shard_and_a_missing_one_is_incomplete(tmp_path: Path) -> None:
    names, slow, in_third = _shard_names()
    project = _project(tmp_path, [n for n in names if n != slow], [slow])
    first = _cli(project, "run", "s.eval.yaml", "-o", "shard-1", "--shard", "1/3", "-q")
    assert first.returncode == 0, first.stdout + first.stderr
    second_fast = sum(1 for n in names if shard_of("s", n, 3) == 2) - 1
    code, output = run_until(project, project / "shard-2", second_fast, signal.SIGTERM, "--shard", "2/3")
    assert code == 130, output
    # shard 3/3 never uploaded anything (killed by timeout-minutes before its first row, say)

    merged = _cli(project, "merge", "shard-1", "shard-2", "-o", "merged")
    assert merged.returncode == 3, merged.stdout + merged.stderr
    expected = f"incomplete: {1 + in_third} of {len(names)} tests did not run (no results from shard 3/3)"
    assert expected in merged.stdout
    report = _cli(project, "report", "merged")
    assert report.returncode == 3, report.stdout + report.stderr
    assert expected in report.stdout

    # the two complete shards alone: still shard 2/3 missing
    alone = _cli(project, "merge", "shard-1", "-o", "only-1")
    assert alone.returncode == 3
    assert "no results from shard 2/3, 3/3" in alone.stdout


def test_results_without_a_plan_are_read_as_before_and_say_the_plan_is_unknown(tmp_path: Path) -> None:
    # rows as AgentV writes them: camelCase, no plan.jsonl, no summary.json
    results = tmp_path / "agentv"
    results.mkdir()
    rows = [
        {"testId": "greet", "suite": "demo", "target": "default", "score": 1.0, "executionStatus": "ok"},
        {"testId": "bye", "suite": "demo", "target": "default", "score": 0.9, "executionStatus": "ok"},
    ]
    (results / "index.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = _cli(tmp_path, "report", "agentv", "--markdown", "m.md")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASSED: 2/2 tests passed" in done.stdout
    assert "plan unknown" in done.stdout
    assert "plan unknown" in (tmp_path / "m.md").read_text()
    merged = _cli(tmp_path, "merge", "agentv", "-o", "merged")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert "plan unknown" in merged.stderr


def test_the_action_results_input_on_a_killed_run_is_incomplete(
    tmp_path: Path, github_server: FakeGitHub
) -> None:
    from tests.e2e.scaffold import Project, run_action

    project = Project(tmp_path / "action")
    project.commit({"README.md": "demo, changed\n"})
    runner = _project(tmp_path / "runner", FAST, ["slow"])
    code, output = run_until(runner, runner / "out", 3, signal.SIGKILL)
    assert code == -signal.SIGKILL, output
    (runner / "out").rename(project.repo / "shard-results")  # what the killed job uploaded
    env = project.env(github_server, project.event(), results="shard-results")

    done = run_action(env, project.root)

    assert done.returncode == 3, done.stdout + done.stderr
    outputs = project.outputs()
    assert outputs["verdict"] == "inconclusive"
    assert "incomplete: 1 of 4 tests did not run" in outputs["verdict_text"]
    assert outputs["not_run"] == "1"
    [comment] = github_server.comments_on(7)
    assert "incomplete: 1 of 4 tests did not run" in comment.body
    assert "incomplete: 1 of 4 tests did not run" in (project.root / "files" / "summary.md").read_text()
