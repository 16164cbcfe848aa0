"""A failed check whose grader has no name is named after its value (`equals-<value>`): with a
900,000-character value the JUnit failure message was 900 KB. Through the real CLI the message
stays short while the report still says what failed."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.cli_helpers import run_cli


def test_a_huge_unnamed_check_keeps_the_junit_failure_message_short(tmp_path: Path) -> None:
    evals = tmp_path / "evals"
    (evals / ".agentv").mkdir(parents=True)
    target = {"name": "default", "provider": "cli", "command": "echo AAAA > {OUTPUT_FILE}"}
    (evals / ".agentv" / "targets.yaml").write_text(json.dumps({"targets": [target]}))
    test = {"id": "t1", "input": "hi", "assertions": [{"type": "equals", "value": "C" * 900_000}]}
    (evals / "a.eval.yaml").write_text(json.dumps({"tests": [test]}))
    junit = tmp_path / "junit.xml"
    result = run_cli("run", str(evals), "-o", str(tmp_path / "out"), "--junit", str(junit), cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    [failure] = [e for e in ET.parse(junit).getroot().iter("failure")]
    message = failure.attrib["message"]
    assert message.startswith("equals-CCC") and "expected" in message and "got" in message
    assert len(message) < 1000, len(message)
    assert junit.stat().st_size < 100_000
