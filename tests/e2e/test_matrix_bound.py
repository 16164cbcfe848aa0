"""The bound on the matrix of a run (issue 19, item 6): tests x targets past 1,000,000 is a located
error (E115, exit 2) in `validate` and in `run`, before anything runs; at the bound it validates.
Apart from tests/e2e/test_bounds.py because a million-job file takes a while: `--dist loadfile`
runs the two files on different workers."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentv_ci.model.bounds import MAX_JOBS, MAX_TARGETS
from tests.cli_helpers import run_cli
from tests.e2e.test_bounds import GRADER, _project, _targets


def _matrix_project(tmp_path: Path, tests: int) -> Path:
    suite = f"name: s\nexecution:\n  targets: {_targets(MAX_TARGETS)}\ntests: ./cases.jsonl\n"
    project = _project(tmp_path, suite + GRADER.replace("    ", "", 1), targets=MAX_TARGETS)
    with (project / "cases.jsonl").open("w") as out:
        for i in range(tests):
            out.write(f'{{"id": "c{i}", "input": "q", "expected_output": "yes"}}\n')
    return project


@pytest.mark.slow
def test_the_matrix_of_a_run_is_bounded(tmp_path: Path) -> None:
    """Tests x targets past 1,000,000: located at the test that crosses it, in `validate` and `run`."""
    tests = MAX_JOBS // MAX_TARGETS + 1
    project = _matrix_project(tmp_path, tests)
    located = f"cases.jsonl:{tests}:"
    checked = run_cli("validate", "s.eval.yaml", cwd=project, timeout=300)
    assert checked.returncode == 2, checked.stdout[-2000:] + checked.stderr
    assert located in checked.stdout and "E115" in checked.stdout
    assert f"past {MAX_JOBS:,} tests x targets" in checked.stdout
    ran = run_cli("run", "s.eval.yaml", "-o", "out", cwd=project, timeout=300)
    assert ran.returncode == 2, ran.stderr[-2000:]
    assert located in ran.stderr and "nothing was run" in ran.stderr
    assert not (project / "out" / "index.jsonl").exists()


def test_a_matrix_at_the_bound_validates(tmp_path: Path) -> None:
    project = _matrix_project(tmp_path, MAX_JOBS // MAX_TARGETS)
    checked = run_cli("validate", "s.eval.yaml", cwd=project, timeout=300)
    assert checked.returncode == 0, checked.stdout[-2000:] + checked.stderr
