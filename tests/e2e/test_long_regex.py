"""A regex pattern with a long literal (`'E' * 20000`) made the `regex` module prepare its fast search
for minutes, holding the GIL and ignoring both the match budget and SIGINT/SIGTERM. Through the real
CLI: such a pattern is a located E106 (validate and run, nothing run), one at the bound still grades."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_helpers import run_cli


def _project(root: Path, pattern: str) -> Path:
    evals = root / "evals"
    (evals / ".agentv").mkdir(parents=True)
    target = {"name": "default", "provider": "cli", "command": "echo " + "A" * 50 + " > {OUTPUT_FILE}"}
    (evals / ".agentv" / "targets.yaml").write_text(json.dumps({"targets": [target]}))
    test = {"id": "t1", "input": "hi", "assertions": [{"type": "regex", "value": pattern}]}
    (evals / "a.eval.yaml").write_text(json.dumps({"tests": [test]}))
    return evals


def test_a_regex_with_a_20000_character_literal_is_refused_at_its_line(tmp_path: Path) -> None:
    evals = _project(tmp_path, "E" * 20_000)
    checked = run_cli("validate", str(evals), cwd=tmp_path, timeout=60)
    assert checked.returncode == 2, checked.stdout[-2000:] + checked.stderr[-2000:]
    assert "a.eval.yaml:1:" in checked.stdout and "error[E106]" in checked.stdout
    assert "20000 characters long, more than the 1000" in checked.stdout
    assert len(checked.stdout) < 2000  # the pattern is cut in the message
    refused = run_cli("run", str(evals), "-o", str(tmp_path / "out"), cwd=tmp_path, timeout=60)
    assert refused.returncode == 2, refused.stdout[-2000:] + refused.stderr[-2000:]


def test_a_regex_at_the_bound_still_grades(tmp_path: Path) -> None:
    evals = _project(tmp_path, "A{50}|" + "ab" * 497)  # 1000 characters
    result = run_cli("run", str(evals), "-o", str(tmp_path / "out"), cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
