"""`depends_on` runs in dependency waves (issue 22, item 1), through the CLI with a real cli-agent
subprocess: the agent logs when each test starts and ends (and fails test `a` on request), and the
dependent's code grader writes its stdin payload to a file. Expectations follow AgentV 4.42.4's
orchestrator (computeWaves, checkDependencies, the `on_dependency_failure` policies)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from tests.cli_helpers import run_cli

PY = sys.executable

AGENT = """\
import sys, time
test, out, log, target, fail = sys.argv[1:6]
with open(log, "a") as f:
    f.write(f"start {target} {test} {time.monotonic()}\\n")
time.sleep(0.4 if test == "a" else 0.05)  # a dependent started early would start inside this
with open(log, "a") as f:
    f.write(f"end {target} {test} {time.monotonic()}\\n")
if test in fail.split(","):
    sys.exit(1)
open(out, "w").write("ok " + test)
"""

GRADER = """\
import json, sys
payload = json.load(sys.stdin)
name = "grader-" + payload["input"][-1]["content"].split()[-1] + ".json"
with open(name, "w") as f:
    json.dump(payload, f)
print(json.dumps({"score": 1, "assertions": [{"text": "payload saved", "passed": True}]}))
"""


def _project(tmp_path: Path, tests: str, *, targets: str = "agent", fail: str = "-") -> Path:
    """`targets`: comma-separated names; `fail`: the tests whose agent exits 1 (`target:test` for
    one target only)."""
    project = tmp_path / "project"
    (project / ".agentv").mkdir(parents=True)
    (project / ".git").mkdir()
    (project / "agent.py").write_text(AGENT)
    (project / "grader.py").write_text(GRADER)
    log = project / "order.log"

    def failing(name: str) -> str:
        picked = [f.split(":")[-1] for f in fail.split(",") if ":" not in f or f.startswith(name + ":")]
        return ",".join(picked) or "-"

    entries = "".join(
        f"  - name: {name}\n    provider: cli\n"
        f"    command: {PY} agent.py {{EVAL_ID}} {{OUTPUT_FILE}} {log} {name} {failing(name)}\n"
        for name in targets.split(",")
    )
    (project / ".agentv" / "targets.yaml").write_text("targets:\n" + entries)
    listed = ", ".join(targets.split(","))
    (project / "deps.eval.yaml").write_text(f"execution: {{targets: [{listed}]}}\ntests:\n{tests}")
    return project


def _test(test_id: str, extra: str = "") -> str:
    return (
        f"  - id: {test_id}\n    input: run {test_id}\n{extra}    assertions:\n"
        "      - {type: contains, value: ok}\n"
        f"      - {{name: saver, type: code-grader, command: [{PY}, grader.py]}}\n"
    )


def _run(project: Path, *args: str) -> tuple[int, str, dict[tuple[str, str], Any]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTV_CI_"))}
    env.update(XDG_CACHE_HOME=str(project / "cache"))
    out = project / "out"
    done = run_cli(
        "run", "deps.eval.yaml", "-o", str(out), "--no-cache", *args, cwd=project, env=env, timeout=120
    )
    rows: dict[tuple[str, str], Any] = {}
    if (out / "index.jsonl").is_file():
        for line in (out / "index.jsonl").read_text().splitlines():
            row = json.loads(line)
            rows[(row["test_id"], row["target"])] = row
    return done.returncode, done.stdout + done.stderr, rows


def _log(project: Path) -> list[tuple[str, str, str, float]]:
    path = project / "order.log"
    if not path.is_file():
        return []
    return [(e, t, i, float(s)) for e, t, i, s in (line.split() for line in path.read_text().splitlines())]


def _time(log: list[tuple[str, str, str, float]], event: str, test: str, target: str = "agent") -> float:
    return next(s for e, t, i, s in log if (e, t, i) == (event, target, test))


def _started(log: list[tuple[str, str, str, float]]) -> set[str]:
    return {i for e, _, i, _ in log if e == "start"}


def test_skip_is_the_default_a_failed_dependency_skips_its_dependents_and_theirs(tmp_path: Path) -> None:
    tests = _test("a") + _test("b", "    depends_on: [a]\n") + _test("c", "    depends_on: b\n") + _test("d")
    project = _project(tmp_path, tests, fail="a")
    code, output, rows = _run(project)
    assert code == 3, output  # execution errors: inconclusive, as every execution error
    assert rows[("a", "agent")]["execution_status"] == "execution_error"
    for test_id, message in (
        ("b", "Skipped: dependency failed (a)"),
        ("c", "Skipped: dependency failed (b)"),
    ):
        row = rows[(test_id, "agent")]
        assert row["execution_status"] == "execution_error", row
        assert row["error"] == message and row["output"] == message
        assert row["score"] == 0 and row["verdict"] == "fail"
        assert (row["failure_stage"], row["failure_reason_code"]) == ("setup", "dependency_failed")
    assert rows[("d", "agent")]["execution_status"] == "ok"  # not a dependent: runs as ever
    assert _started(_log(project)) == {"a", "d"}  # b and c never reached the agent
    assert not (project / "grader-b.json").exists()


def test_fail_policy_records_the_dependent_as_failed_with_agentv_wording(tmp_path: Path) -> None:
    tests = _test("a") + _test("b", "    depends_on: [a]\n    on_dependency_failure: fail\n")
    project = _project(tmp_path, tests, fail="a")
    code, output, rows = _run(project)
    assert code == 3, output
    row = rows[("b", "agent")]
    # AgentV 4.42.4: `fail` differs from `skip` in its wording only (an execution error, score 0)
    assert row["error"] == "Failed: dependency failed (a)", row
    assert row["execution_status"] == "execution_error" and row["score"] == 0
    assert row["failure_reason_code"] == "dependency_failed"
    assert _started(_log(project)) == {"a"}


def test_run_policy_runs_the_dependent_after_its_failed_dependency_with_its_result(tmp_path: Path) -> None:
    tests = _test("a") + _test("b", "    depends_on: [a]\n    on_dependency_failure: run\n")
    project = _project(tmp_path, tests, fail="a")
    code, output, rows = _run(project)
    assert code == 3, output  # `a` is still an execution error
    assert rows[("b", "agent")]["execution_status"] == "ok", rows[("b", "agent")]
    log = _log(project)
    assert _time(log, "start", "b") >= _time(log, "end", "a")  # b started after a finished
    payload = json.loads((project / "grader-b.json").read_text())
    dependency = payload["dependency_results"]["a"]
    assert dependency["status"] == "error" and dependency["score"] == 0
    assert dependency["output"] == "Error occurred: " + rows[("a", "agent")]["error"]  # AgentV's wording
    assert set(dependency) <= {"score", "output", "workspace_path", "details", "status"}


def test_a_dependent_waits_for_its_dependency_and_its_graders_get_the_result(tmp_path: Path) -> None:
    # a passes slowly, f scores low (a quality failure is not a failed dependency); with 10 workers
    # b and g still start only after their dependencies ended, and e (no dependency) does not wait
    tests = (
        _test("a")
        + "  - id: f\n    input: run f\n    assertions:\n      - {type: contains, value: never}\n"
        + _test("b", "    depends_on: [a, f]\n")
        + _test("e")
    )
    project = _project(tmp_path, tests)
    code, output, rows = _run(project, "--workers", "10")
    assert code == 1, output  # f failed its grader: a quality failure, and b still ran
    assert rows[("f", "agent")]["execution_status"] == "quality_failure"
    assert rows[("b", "agent")]["execution_status"] == "ok"
    log = _log(project)
    assert _time(log, "start", "b") >= max(_time(log, "end", "a"), _time(log, "end", "f"))
    assert _time(log, "start", "e") < _time(log, "end", "a")  # wave 0 ran together
    payload = json.loads((project / "grader-b.json").read_text())
    assert payload["dependency_results"] == {
        "a": {
            "score": 1.0,
            "output": "ok a",
            "details": {
                "contains-ok": {"score": 1.0, "verdict": "pass"},
                "saver": {"score": 1.0, "verdict": "pass"},
            },
            "status": "passed",
        },
        "f": {
            "score": 0.0,
            "output": "ok f",
            "details": {"contains-never": {"score": 0.0, "verdict": "fail"}},
            "status": "failed",
        },
    }
    # a test without depends_on gets no dependency_results (as AgentV: only when it has some)
    assert "dependency_results" not in json.loads((project / "grader-e.json").read_text())


def test_dependencies_are_per_target(tmp_path: Path) -> None:
    tests = _test("a") + _test("b", "    depends_on: [a]\n")
    project = _project(tmp_path, tests, targets="left,right", fail="left:a")  # a fails on left only
    code, output, rows = _run(project)
    assert code == 3, output
    assert rows[("b", "left")]["error"] == "Skipped: dependency failed (a)"
    assert rows[("b", "right")]["execution_status"] == "ok"
    log = _log(project)
    assert _time(log, "start", "b", "right") >= _time(log, "end", "a", "right")
    assert ("start", "left", "b") not in {(e, t, i) for e, t, i, _ in log}


def test_a_selected_test_whose_dependency_is_left_out_is_refused_before_anything_runs(tmp_path: Path) -> None:
    tests = _test("a") + _test("b", "    depends_on: [a]\n")
    project = _project(tmp_path, tests)
    code, output, rows = _run(project, "--test-id", "b")
    assert code == 2, output
    assert "deps.eval.yaml:" in output
    assert "test 'b' depends on 'a', which this run does not run" in output
    assert "--test-id a" in output  # the hint
    assert rows == {} and _log(project) == []
    code, output, rows = _run(project, "--test-id", "b", "--test-id", "a")
    assert code == 0, output
    assert set(rows) == {("a", "agent"), ("b", "agent")}


def test_a_resumed_run_hands_the_dependent_its_dependencys_earlier_row(tmp_path: Path) -> None:
    # first run: c errors and `fail_on_error` halts the run, so b (wave 1) is not run; a passed
    tests = _test("a") + _test("c") + _test("b", "    depends_on: [a]\n")
    project = _project(tmp_path, tests, fail="c")
    eval_file = project / "deps.eval.yaml"
    eval_file.write_text(eval_file.read_text().replace("execution: {", "execution: {fail_on_error: true, "))
    code, output, rows = _run(project, "--workers", "1")
    assert code == 3, output
    assert rows[("b", "agent")]["execution_status"] == "not_run", rows[("b", "agent")]
    assert rows[("a", "agent")]["execution_status"] == "ok"
    (project / "order.log").unlink()
    code, output, rows = _run(project, "--resume")
    assert rows[("b", "agent")]["execution_status"] == "ok", output
    assert _started(_log(project)) == {"b"}  # a is not run again: its earlier row is its result
    payload = json.loads((project / "grader-b.json").read_text())
    assert payload["dependency_results"]["a"]["status"] == "passed"
    assert payload["dependency_results"]["a"]["output"] == "ok a"


def test_a_shard_that_splits_a_dependency_from_its_dependent_is_refused(tmp_path: Path) -> None:
    from agentv_ci.running.sharding import shard_of

    tests = _test("a") + _test("b", "    depends_on: [a]\n")
    project = _project(tmp_path, tests)
    count = next(n for n in range(2, 50) if shard_of("deps", "a", n) != shard_of("deps", "b", n))
    shard = shard_of("deps", "b", count)
    code, output, rows = _run(project, "--shard", f"{shard}/{count}")
    assert code == 2, output
    assert f"it falls in shard {shard_of('deps', 'a', count)}/{count}, not {shard}/{count}" in output
    assert rows == {} and _log(project) == []


def test_a_jsonl_dataset_with_depends_on_runs_in_waves(tmp_path: Path) -> None:
    # a dataset is streamed, not held; one with depends_on is held while it runs
    project = _project(tmp_path, _test("unused"), fail="a")
    (project / "deps.eval.yaml").unlink()
    (project / "cases.yaml").write_text(
        "name: cases\nexecution: {target: agent}\nassertions:\n  - {type: contains, value: ok}\n"
        f"  - {{name: saver, type: code-grader, command: [{PY}, grader.py]}}\n"
    )
    rows = [
        {"id": "c", "input": "run c", "depends_on": ["b"], "on_dependency_failure": "run"},
        {"id": "a", "input": "run a"},
        {"id": "b", "input": "run b", "depends_on": ["a"]},
        {"id": "d", "input": "run d"},
    ]
    (project / "cases.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTV_CI_"))}
    env.update(XDG_CACHE_HOME=str(project / "cache"))
    done = run_cli("run", "cases.jsonl", "-o", "out", "--no-cache", cwd=project, env=env, timeout=120)
    assert done.returncode == 3, done.stdout + done.stderr
    results = {
        row["test_id"]: row
        for row in map(json.loads, (project / "out" / "index.jsonl").read_text().splitlines())
    }
    assert results["b"]["error"] == "Skipped: dependency failed (a)"
    assert results["c"]["execution_status"] == "ok"  # `run`: after its skipped dependency
    assert results["d"]["execution_status"] == "ok"
    log = _log(project)
    assert _started(log) == {"a", "c", "d"}
    assert _time(log, "start", "c") >= _time(log, "end", "a")  # wave 2 after wave 0
    payload = json.loads((project / "grader-c.json").read_text())
    assert payload["dependency_results"]["b"]["status"] == "error"
    assert payload["dependency_results"]["b"]["output"] == "Skipped: dependency failed (a)"


def test_a_wave_starts_when_the_whole_previous_wave_has_finished(tmp_path: Path) -> None:
    # as AgentV's wave loop: y depends on the quick x only, yet starts after the slow a (wave 0) ended
    tests = _test("a") + _test("x") + _test("y", "    depends_on: [x]\n")
    project = _project(tmp_path, tests)
    code, output, rows = _run(project, "--workers", "4")
    assert code == 0, output
    assert rows[("y", "agent")]["execution_status"] == "ok"
    log = _log(project)
    assert _time(log, "start", "y") >= _time(log, "end", "a") > _time(log, "end", "x")
