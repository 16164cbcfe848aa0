"""`once_per_session` (tests/session_once.py), in a real pytest-xdist session on three workers: an
artefact three files need is built once and each sees it; a build that fails is built again by the next
worker, never reused half-made."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT

CONFTEST = """\
import time
from pathlib import Path

import pytest

from tests.session_once import once_per_session

HERE = Path(__file__).parent


def _build(name, fail_first):
    def build(where):
        log = HERE / f"{name}.log"
        with log.open("a") as out:
            out.write("build\\n")
        time.sleep(0.5)  # long enough that the other workers arrive while it is being built
        if fail_first and log.read_text().count("build") == 1:
            raise RuntimeError("the first build fails")
        (where / "value").write_text("42")

    return build


@pytest.fixture(scope="session")
def artefact(tmp_path_factory):
    return once_per_session(tmp_path_factory, "artefact", _build("artefact", False))


# Per test, not per session: a worker whose build failed asks again (pytest would replay a session
# fixture's error), so whichever files a worker gets, exactly one build fails.
@pytest.fixture
def flaky(tmp_path_factory):
    return once_per_session(tmp_path_factory, "flaky", _build("flaky", True))
"""


def test_workers_build_an_artefact_once_and_a_failed_build_again(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    for fixture in ("artefact", "flaky"):
        for name in ("a", "b", "c"):
            (tmp_path / f"test_{fixture}_{name}.py").write_text(
                f"def test_sees_it({fixture}):\n    assert ({fixture} / 'value').read_text() == '42'\n"
            )
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", os.devnull, "--rootdir", str(tmp_path),
         "-p", "no:cacheprovider", "-p", "no:randomly", "-n", "3", "--dist", "loadfile", "-q", "-rE",
         str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    log = done.stdout + done.stderr
    assert (tmp_path / "artefact.log").read_text().splitlines() == ["build"], log
    # One worker's build of `flaky` fails (its test errors); the next builds again, the third reuses it.
    assert (tmp_path / "flaky.log").read_text().splitlines() == ["build", "build"], log
    assert "5 passed, 1 error" in done.stdout and "the first build fails" in done.stdout, log
