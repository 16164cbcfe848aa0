"""Two test ids that differ only in a secret are one key once the secret is masked in index.jsonl:
`run`'s JUnit then shows one case of two attempts, as `report` does from the same file, never a red
case followed by a green one of the same name (which a retry-aware reader would call green)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from tests.cli_helpers import run_cli


def test_ids_that_differ_in_a_secret_are_one_junit_case(tmp_path: Path) -> None:
    evals = tmp_path / "evals"
    (evals / ".agentv").mkdir(parents=True)
    (evals / ".agentv" / "targets.yaml").write_text("targets:\n  - name: default\n    provider: mock\n")
    (evals / "d.yaml").write_text("name: d\nassertions:\n  - type: contains\n    value: answer\n")
    (evals / "d.jsonl").write_text(
        '{"id": "id-secretBBBB7654321", "input": "q", "expected_output": "nope"}\n'
        '{"id": "id-secretAAAA1234567", "input": "q", "expected_output": "answer"}\n'
    )
    env = {**os.environ, "MY_API_KEY": "secretAAAA1234567", "OTHER_TOKEN": "secretBBBB7654321"}
    out = tmp_path / "out"
    junit_path = out / "junit.xml"
    run = run_cli("run", ".", "--dry-run", "-o", str(out), "--junit", str(junit_path), cwd=evals, env=env)
    assert run.returncode in (0, 1), run.stdout + run.stderr
    junit = junit_path.read_text()
    assert "secretAAAA" not in junit and "secretBBBB" not in junit
    names = re.findall(r'<testcase name="([^"]*)"', junit)
    assert names == ["id-*** [default]"], junit
    assert 'tests="1"' in junit and "1/2 attempts passed" in junit
    again = tmp_path / "again.xml"
    report = run_cli("report", str(out / "index.jsonl"), "--junit", str(again), cwd=evals, env=env)
    assert report.returncode in (0, 1), report.stdout + report.stderr
    case = re.compile(r"<testcase.*?</testcase>", re.S)
    assert case.findall(again.read_text()) == case.findall(junit)  # run and report agree
