"""Test reporters echo JUnit names and messages to the Actions log: a test id, input and expected
value holding `##[error]`, `::add-mask::` lines and ESC/BEL never reach the JUnit file as written
(issue 19, item 2), through the real CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.cli_helpers import run_cli

BAD = "x\n::add-mask::Paris\n  ::stop-commands::abc\x1b]0;T\x07\x1b[31m\r##[error]z"


def test_the_junit_file_holds_no_workflow_command_or_escape(tmp_path: Path) -> None:
    evals = tmp_path / "evals"
    (evals / ".agentv").mkdir(parents=True)
    target = {"name": "default", "provider": "cli", "command": "echo ok > {OUTPUT_FILE}"}
    (evals / ".agentv" / "targets.yaml").write_text(json.dumps({"targets": [target]}))
    tests = [{"id": "t" + BAD, "input": BAD, "assertions": [{"type": "contains", "value": "NO" + BAD}]}]
    (evals / "a.eval.yaml").write_text(json.dumps({"description": BAD, "tests": tests}))
    junit = tmp_path / "junit.xml"
    result = run_cli("run", str(evals), "-o", str(tmp_path / "out"), "--junit", str(junit), cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    data = junit.read_bytes()
    assert b"Paris" in data and b"error]z" in data  # the values are there, escaped
    assert b"##[" not in data and b"\x1b" not in data and b"\x07" not in data
    assert not [line for line in data.split(b"\n") if re.match(rb"\s*::", line)]
