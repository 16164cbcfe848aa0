"""Ctrl-C / SIGTERM on a real `agentv-ci run` subprocess leaves every finished result on disk."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

AGENT = """
import json, sys, time
prompt = open(sys.argv[1]).read()
if "slow" in prompt:
    time.sleep(60)
json.dump({"text": "fast answer"}, open(sys.argv[2], "w"))
"""


def _project(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: cli\n"
        f"    command: {sys.executable} agent.py {{PROMPT_FILE}} {{OUTPUT_FILE}}\n"
    )
    graders = "    assertions:\n      - type: contains\n        value: fast\n"
    tests = "".join(f"  - id: fast-{i}\n    input: quick {i}\n{graders}" for i in range(3))
    tests += f"  - id: slow\n    input: slow one\n{graders}"
    (tmp_path / "s.eval.yaml").write_text(f"name: s\ntests:\n{tests}")
    return tmp_path


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_leaves_finished_rows(tmp_path: Path, sig: signal.Signals) -> None:
    project = _project(tmp_path)
    out = project / "out"
    process = subprocess.Popen(
        [sys.executable, "-m", "agentv_ci", "run", "s.eval.yaml", "-o", str(out), "--workers", "4", "-q"],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    index = out / "index.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if index.exists() and len(index.read_text().splitlines()) >= 3:
            break
        time.sleep(0.05)
    process.send_signal(sig)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    rows = {r["test_id"]: r for r in map(json.loads, index.read_text().splitlines())}
    assert sorted(rows) == ["fast-0", "fast-1", "fast-2", "slow"]
    assert all(rows[f"fast-{i}"]["execution_status"] == "ok" for i in range(3))
    # the planned test that never finished has a row saying so (dropped again by --resume)
    assert rows["slow"]["execution_status"] == "not_run"
    assert "interrupted" in rows["slow"]["error"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["totals"]["tests"] == 4
    assert (summary["planned"], summary["finished"], summary["not_run"]) == (4, 3, 1)
    assert summary["interrupted"] is True  # a partial run is never taken as a baseline
