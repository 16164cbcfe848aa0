"""Installing the package: what `pip install .` prints and declares."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

from tests.conftest import REPO_ROOT


def test_license_is_an_spdx_string_with_a_setuptools_that_reads_it() -> None:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    assert project["project"]["license"] == "MIT"  # a TOML table is deprecated (PEP 639)
    (requirement,) = [r for r in project["build-system"]["requires"] if r.startswith("setuptools")]
    assert requirement.replace(" ", "") == "setuptools>=77"  # the first release reading SPDX strings


def test_building_prints_no_deprecation_banner(tmp_path: Path) -> None:
    # The same build backend `pip install .` runs, in an isolated build environment from the index.
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "-w", str(tmp_path), str(REPO_ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    output = done.stdout + done.stderr
    assert "deprecated" not in output.lower(), [line for line in output.splitlines() if "eprecat" in line]
    (wheel,) = tmp_path.glob("agentv_ci-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        (metadata,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        requires = [
            line for line in archive.read(metadata).decode().splitlines() if line.startswith("Requires-Dist:")
        ]
    # junit-xml is the JUnit oracle of the tests only (tests/reporting/junit_oracle.py)
    junit_xml = [line for line in requires if line.lower().startswith("requires-dist: junit-xml")]
    assert junit_xml and all('extra == "dev"' in line for line in junit_xml), junit_xml
