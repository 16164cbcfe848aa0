from __future__ import annotations

import json
import os
from pathlib import Path

from agentv_ci.gating import GateOptions, decide
from agentv_ci.github.step_summary import append_step_summary
from agentv_ci.model.result import RunSummary, TestResult
from tests.cli_helpers import mock_project, run_cli


def _summary() -> RunSummary:
    return RunSummary(
        [
            TestResult("good", "smoke", "mock", 1.0, "ok", verdict="pass"),
            TestResult("bad", "smoke", "mock", 0.2, "quality_failure", verdict="fail", output="<b>@team</b>"),
        ]
    )


def test_appends_to_the_job_summary_only_inside_actions(tmp_path: Path) -> None:
    summary = _summary()
    decision = decide(summary, GateOptions())
    assert append_step_summary(summary, decision, env={}) is None
    target = tmp_path / "step-summary.md"
    target.write_text("earlier step\n")
    written = append_step_summary(summary, decision, env={"GITHUB_STEP_SUMMARY": str(target)})
    assert written == target
    text = target.read_text()
    assert text.startswith("earlier step\n")  # appended, never overwritten
    assert "FAILED" in text.splitlines()[1]  # the verdict line comes first
    assert "@team" not in text  # model text cannot mention anyone


def test_report_command_writes_the_step_summary(tmp_path: Path) -> None:
    rows = [
        {"test_id": "a", "suite": "s", "target": "t", "score": 1.0, "execution_status": "ok"},
        {"test_id": "b", "suite": "s", "target": "t", "score": 0.1, "execution_status": "quality_failure"},
    ]
    index = tmp_path / "index.jsonl"
    index.write_text("".join(json.dumps(r) + "\n" for r in rows))
    target = tmp_path / "summary.md"
    env = dict(os.environ, GITHUB_STEP_SUMMARY=str(target))
    proc = run_cli("report", str(index), env=env)
    assert proc.returncode == 1, proc.stderr
    assert "1/2 tests passed" in target.read_text()


def test_run_writes_the_step_summary(tmp_path: Path) -> None:
    evals = mock_project(
        tmp_path / "evals",
        response="hello world",
        eval_file="s.eval.yaml",
        eval_yaml="name: s\ntests:\n  - id: t\n    input: hi\n"
        "    assertions:\n      - type: contains\n        value: hello\n",
    )
    target = tmp_path / "summary.md"
    env = dict(os.environ, GITHUB_STEP_SUMMARY=str(target))
    proc = run_cli("run", str(evals), "-o", str(tmp_path / "out"), env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "PASSED" in target.read_text().splitlines()[0]
