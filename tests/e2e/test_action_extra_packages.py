"""The `extra_packages` input in the real container: the Action pip-installs a third-party grader at
start (from a local wheel directory through pip's own `PIP_*` variables, as a private index would be
configured) and the eval graded by it runs; a package that cannot be installed is bad input (exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.test_action_container import (
    _PROBLEM,
    THIRD_PARTY_MODULE,
    THIRD_PARTY_PYPROJECT,
    _docker_run,
    image,  # noqa: F401 (the image fixture, built once per session)
)

pytestmark = [pytest.mark.slow, pytest.mark.skipif(_PROBLEM is not None, reason=_PROBLEM or "")]

SHOUTED = """\
tests:
  - id: loud
    input: Say hello loudly.
    assertions:
      - type: acme-shouting
"""


def _wheelhouse(tmp_path: Path) -> Path:
    plugin = tmp_path / "plugin"
    (plugin / "acme_shouting").mkdir(parents=True)
    (plugin / "pyproject.toml").write_text(THIRD_PARTY_PYPROJECT)
    (plugin / "acme_shouting" / "__init__.py").write_text(THIRD_PARTY_MODULE)
    wheels = tmp_path / "wheels"
    build = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
    subprocess.run(
        [*build, "-w", str(wheels), str(plugin)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return wheels


def _workspace(tmp_path: Path, answer: str) -> Path:
    workspace = tmp_path / "workspace"
    (workspace / ".agentv").mkdir(parents=True)
    (workspace / ".agentv" / "targets.yaml").write_text(
        f"targets:\n  - name: default\n    provider: mock\n    response: {answer}\n"
    )
    (workspace / "loud.eval.yaml").write_text(SHOUTED)
    return workspace


def _action(tag: str, workspace: Path, wheels: Path, packages: str) -> subprocess.CompletedProcess[str]:
    return _docker_run(
        "-v", f"{workspace}:/github/workspace",
        "-v", f"{wheels}:/wheels:ro",
        "-e", "GITHUB_WORKSPACE=/github/workspace",
        "-e", "GITHUB_ACTIONS=true",
        "-e", "INPUT_COMMENT=false",
        "-e", f"INPUT_EXTRA_PACKAGES={packages}",
        "-e", "PIP_NO_INDEX=1",
        "-e", "PIP_FIND_LINKS=/wheels",
        "--entrypoint", "/usr/local/bin/agentv-ci-action",
        tag,
    )  # fmt: skip


def test_extra_packages_installs_a_grader_the_eval_uses(image: str, tmp_path: Path) -> None:  # noqa: F811
    wheels = _wheelhouse(tmp_path)
    workspace = _workspace(tmp_path, "HELLO THERE")
    done = _action(image, workspace, wheels, "acme-shouting-grader==1.0.0")
    log = done.stdout + done.stderr
    assert done.returncode == 0, log
    assert "installing extra packages: acme-shouting-grader==1.0.0" in log
    assert "Successfully installed acme-shouting-grader-1.0.0" in log
    [row] = [
        json.loads(line) for line in (workspace / ".agentv-ci/results/index.jsonl").read_text().splitlines()
    ]
    assert row["score"] == 1.0
    assert "all upper case" in json.dumps(row)

    # the same eval, a quiet answer: the installed grader really grades (exit 1, the gate fails)
    quiet = _workspace(tmp_path / "quiet", "hello there")
    failed = _action(image, quiet, wheels, "acme-shouting-grader==1.0.0")
    assert failed.returncode == 1, failed.stdout + failed.stderr


def test_a_package_that_cannot_be_installed_is_bad_input(image: str, tmp_path: Path) -> None:  # noqa: F811
    wheels = tmp_path / "empty"
    wheels.mkdir()
    workspace = _workspace(tmp_path, "HELLO")
    done = _action(image, workspace, wheels, "acme-shouting-grader==9.9.9")
    log = done.stdout + done.stderr
    assert done.returncode == 2, log
    assert "input `extra_packages`: pip could not install acme-shouting-grader==9.9.9" in log
    assert not (workspace / ".agentv-ci" / "results" / "index.jsonl").exists()
