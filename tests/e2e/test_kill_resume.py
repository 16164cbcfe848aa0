"""SIGKILL at random points of a real run, then `--resume`, over and over: the results end complete,
every test exactly once, and no torn line survives."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

TESTS = 40
KILLS = 5
AGENT = "import json, sys, time\ntime.sleep(0.03)\njson.dump({'text': 'ok'}, open(sys.argv[1], 'w'))\n"


def _rows(index: Path) -> list[bytes]:
    return index.read_bytes().splitlines() if index.exists() else []


def test_five_sigkills_then_resume_leave_every_test_once(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: cli\n"
        f"    command: {sys.executable} agent.py {{OUTPUT_FILE}}\n"
    )
    graders = "    assertions:\n      - type: contains\n        value: ok\n"
    tests = "".join(f"  - id: t{i:02d}\n    input: q{i}\n{graders}" for i in range(TESTS))
    (tmp_path / "k.eval.yaml").write_text(f"tests:\n{tests}")
    out = tmp_path / "out"
    index = out / "index.jsonl"
    command = [
        sys.executable,
        "-m",
        "agentv_ci",
        "run",
        "k.eval.yaml",
        "-o",
        str(out),
        "--workers",
        "4",
        "-q",
    ]
    chooser = random.Random(11)
    for round_ in range(KILLS):
        before = len(_rows(index))
        process = subprocess.Popen(
            [*command, *(["--resume"] if round_ else [])],
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wanted = before + chooser.randint(1, 4)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(_rows(index)) < wanted and process.poll() is None:
            time.sleep(0.002)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    done = subprocess.run([*command, "--resume"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [json.loads(line) for line in _rows(index)]  # every line is whole JSON
    ids = sorted(r["test_id"] for r in rows)
    assert ids == [f"t{i:02d}" for i in range(TESTS)]
    assert all(r["execution_status"] == "ok" for r in rows)
