"""`make test` runs pytest-xdist workers; the tests of one file must run on one worker, or a module
fixture is built once per worker and its teardown (a Docker image removed) pulls it from under a test
on another worker. And the skip reasons stay printed (`-rs`)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT

# Each test writes down which worker ran it; the module fixture counts how often it was built.
RECORDING_TESTS = """\
import os
from pathlib import Path

import pytest

OUT = Path(os.environ["RECORD_DIR"])


@pytest.fixture(scope="module")
def image():
    (OUT / f"built-{os.environ['PYTEST_XDIST_WORKER']}-{os.getpid()}").touch()
    return "image"


@pytest.mark.parametrize("n", range(6))
def test_uses_the_image(image, n):
    (OUT / f"ran-{n}-{os.environ['PYTEST_XDIST_WORKER']}").touch()
"""


def _makefile_parallel_options() -> list[str]:
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    found = re.search(r"^PARALLEL := (.*)$", makefile, re.M)
    assert found is not None, "the Makefile has no PARALLEL options"
    return shlex.split(found.group(1).replace("$(TEST_WORKERS)", "2"))


def test_the_makefile_options_keep_a_files_tests_on_one_worker(tmp_path: Path) -> None:
    project, record = tmp_path / "project", tmp_path / "record"
    project.mkdir()
    record.mkdir()
    (project / "test_shared.py").write_text(RECORDING_TESTS, encoding="utf-8")
    (project / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # not this repository's config
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *_makefile_parallel_options()],
        cwd=project, capture_output=True, text=True, timeout=180,
        env={**os.environ, "RECORD_DIR": str(record)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    names = sorted(path.name for path in record.iterdir())
    workers = {name.rsplit("-", 1)[1] for name in names if name.startswith("ran-")}
    assert len([n for n in names if n.startswith("ran-")]) == 6 and len(workers) == 1, names
    assert len([n for n in names if n.startswith("built-")]) == 1, names  # built once


def test_make_test_runs_the_unit_tests_in_parallel_and_prints_skip_reasons() -> None:
    options = _makefile_parallel_options()
    assert options[:2] == ["-n", "2"], options
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^unit: .*\n\t\$\(BYTECODE\)\n\t\$\(BIN\)/pytest \$\(PARALLEL\)$", makefile, re.M)
    pyproject = (REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^addopts = "[^"]*-rs', pyproject, re.M)


ORDER_CONFTEST = """\
from tests.file_order import longest_files_first


def pytest_collection_modifyitems(items):
    items[:] = longest_files_first(items)
"""


def test_the_files_go_out_slow_first_then_by_their_number_of_tests(tmp_path: Path) -> None:
    """A `slow` file first though it has one test, then the others by size; each file's tests in order."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "pytest.ini").write_text("[pytest]\nmarkers =\n    slow: slow\n", encoding="utf-8")
    (project / "conftest.py").write_text(ORDER_CONFTEST, encoding="utf-8")
    (project / "test_a_two.py").write_text("def test_2(): pass\ndef test_1(): pass\n", encoding="utf-8")
    (project / "test_b_three.py").write_text(
        "import pytest\n\n@pytest.mark.parametrize('n', [3, 1, 2])\ndef test_n(n): pass\n", encoding="utf-8"
    )
    (project / "test_c_slow.py").write_text(
        "import pytest\n\n@pytest.mark.slow\ndef test_clone(): pass\n", encoding="utf-8"
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"],
        cwd=project, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    collected = [line for line in done.stdout.splitlines() if "::" in line]
    assert collected == [
        "test_c_slow.py::test_clone",
        "test_b_three.py::test_n[3]",
        "test_b_three.py::test_n[1]",
        "test_b_three.py::test_n[2]",
        "test_a_two.py::test_2",
        "test_a_two.py::test_1",
    ], done.stdout
    assert "--no-loadscope-reorder" in _makefile_parallel_options()  # xdist keeps this order
