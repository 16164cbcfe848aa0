"""`make test` (what CI runs) runs every test; `make test-fast` leaves out the ones marked slow."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib

from tests.conftest import REPO_ROOT


def _recipe(target: str) -> tuple[str, str]:
    """(prerequisites, recipe lines) of a Makefile target."""
    text = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    found = re.search(rf"^{re.escape(target)}:([^\n]*)\n((?:\t[^\n]*\n)*)", text, re.M)
    assert found, target
    return found.group(1), found.group(2)


def test_make_test_runs_every_test_and_test_fast_only_leaves_out_the_slow_ones() -> None:
    assert _recipe("test")[0].split() == ["lint", "typecheck", "unit"]
    # byte code compiled, then every test: no -m, no -k, nothing deselected
    assert _recipe("unit")[1].split("\n")[:2] == ["\t$(BYTECODE)", "\t$(BIN)/pytest $(PARALLEL)"]
    pytest_options = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["pytest"][
        "ini_options"
    ]
    assert "-m" not in pytest_options["addopts"].split() and "-k" not in pytest_options["addopts"].split()
    fast_needs, fast = _recipe("test-fast")
    assert fast_needs.split() == ["lint"]
    assert fast.strip().split("\n\t") == ["$(BYTECODE)", '$(BIN)/pytest $(PARALLEL) -x -q -m "not slow"']


def test_the_slow_marker_is_registered_and_marks_the_fresh_clone_and_venv_tests() -> None:
    files = ["tests/e2e/test_readme_commands.py", "tests/e2e/test_pre_commit_hook.py"]
    files.append("tests/e2e/test_plugin_wheels.py")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-o", "addopts=", "-q", "-m", "slow", *files],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    selected = [line for line in done.stdout.splitlines() if "::" in line]
    assert any("test_readme_commands.py::" in line for line in selected), done.stdout + done.stderr
    assert any("test_pre_commit_hook.py::test_the_hook_blocks" in line for line in selected)
    assert sum("test_plugin_wheels.py::" in line for line in selected) >= 5
    assert not any("matches_eval_and_targets_files" in line for line in selected)  # the quick one stays
