"""End to end: the JUnit file `agentv-ci run --junit` writes is, byte for byte, what junit-xml builds
from the run's own results (tests/reporting/junit_oracle.py), for a run with a pass, a failure, a
quarantined failure, repeats, execution errors and hostile text, in a real git repository."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from agentv_ci.model.waivers import Waiver
from agentv_ci.results.results_file import load_run
from tests.cli_helpers import run_cli
from tests.e2e.scaffold import Project
from tests.reporting.junit_oracle import junit_xml_document

FAIL_EXIT = f"{sys.executable} -c 'import sys; sys.exit(7)' {{PROMPT_FILE}} {{OUTPUT_FILE}}"
TARGETS = f"""\
targets:
  - name: default
    provider: mock
    response: Paris
  - name: broken
    provider: cli
    command: {FAIL_EXIT}
"""
GEO = """\
execution:
  repeat: 3
tests:
  - id: capital
    input: What is the capital of France?
    assertions:
      - {type: contains, value: Paris}
  - id: wrong
    input: "::warning::What is the capital of Germany? <&>"
    assertions:
      - {type: contains, value: Berlin}
  - id: parked
    input: What is the capital of Spain?
    assertions:
      - {type: contains, value: Madrid}
  - id: after-error
    depends_on: [crashes]
    input: unreachable
    execution:
      target: broken
    assertions:
      - {type: contains, value: Paris}
  - id: crashes
    input: anything
    execution:
      target: broken
    assertions:
      - {type: contains, value: Paris}
"""
QUARANTINE = """\
quarantine:
  - test: geo/parked
    owner: "@ana"
    reason: slow vendor API
    expires: 2999-12-31
"""
WAIVED = "quarantined (owner @ana, until 2999-12-31): slow vendor API"


def test_the_run_s_junit_file_is_what_junit_xml_writes_from_its_results(tmp_path: Path) -> None:
    project = Project(tmp_path)
    project.commit(
        {".agentv/targets.yaml": TARGETS, "evals/geo.eval.yaml": GEO, ".agentv/quarantine.yaml": QUARANTINE}
    )
    (project.repo / "evals" / "math.eval.yaml").unlink()
    junit = tmp_path / "junit.xml"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env["GIT_CONFIG_GLOBAL"] = str(project.root / "gitconfig")

    done = run_cli("run", "evals", "-o", "out", "--junit", str(junit), cwd=project.repo, env=env, timeout=300)

    assert done.returncode == 1, done.stdout + done.stderr  # `wrong` fails: a quality failure wins
    written = junit.read_text(encoding="utf-8")
    summary = load_run(project.repo / "out")
    outcomes = {r.test_id: r.execution_status for r in summary.results}
    assert outcomes == {
        "capital": "ok",
        "wrong": "quality_failure",
        "parked": "quality_failure",
        "crashes": "execution_error",
        "after-error": "execution_error",  # its dependency errored
    }, outcomes
    waived = {("geo", "parked", "default"): Waiver("quarantined", WAIVED)}
    repo_root = Path(
        subprocess.check_output(["git", "rev-parse", "--show-toplevel"], cwd=project.repo, text=True).strip()
    )
    assert written == junit_xml_document(summary, repo_root, waived)
    assert "<flakyFailure " in written and "<failure " in written and "<error " in written
