"""Our SARIF as GitHub code scanning's own checks see it: Microsoft's SARIF Multitool
(`validate --rule-kind Gh;Ghas;Sarif`), installed with npm into the cache dir on first use.

The npm package ships a self-contained native binary per platform (no .NET runtime needed). It is
called directly: the package's `bin.js` wrapper spawns it through a shell, which splits
`Gh;Ghas;Sarif` at the semicolons. Skipped, with the reason, only when npm, the registry or the
binary cannot be had here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from tests.conftest import USER_CACHE_HOME
from tests.reporting.golden import GOLDEN_DIR

MULTITOOL = "@microsoft/sarif-multitool@5.7.0"
REPO = Path(__file__).resolve().parents[2]
# The user's cache dir (tests/conftest.py points XDG_CACHE_HOME at a fresh temp dir per session).
CACHE = USER_CACHE_HOME / "sarif-multitool" / "5.7.0"
# Advisory notes (level `note`) we do not follow, each for a reason; any other result fails the test.
ADVISORY_NOTES = {
    "SARIF2002": "use message.id + arguments: GitHub shows message.text, and ours is per result",
    "SARIF2003": "versionControlProvenance: upload-sarif records the commit and ref itself",
    "SARIF2006": "URIs reachable over HTTP: needs the network, which tests do not have",
    "SARIF2009": "rule ids like AV1001: ours are `agentv/<grader type>`, open to plugin graders, and a "
    "rule id is an alert's identity on GitHub",
    "SARIF2010": "region snippets: GitHub shows the eval file from the repository at the commit",
    "SARIF2011": "context regions: as for snippets",
    "SARIF2012": "rule helpUri: the rules carry help text; no documentation URL is published yet",
}


def _binary(prefix: Path) -> Path | None:
    names = ("Sarif.Multitool.exe",) if sys.platform == "win32" else ("Sarif.Multitool",)
    for package in sorted((prefix / "node_modules" / "@microsoft").glob("sarif-multitool-*")):
        for name in names:
            if (package / name).is_file():
                return package / name
    return None


@pytest.fixture(scope="session")
def multitool() -> Path:
    binary = _binary(CACHE)
    if binary is None:
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip(f"npm is not on PATH: cannot install {MULTITOOL}")
        staging = CACHE.with_name(f"{CACHE.name}.{os.getpid()}.tmp")
        shutil.rmtree(staging, ignore_errors=True)
        command = [npm, "install", "--prefix", str(staging), "--no-audit", "--no-fund", "--fetch-retries=1",
                   "--fetch-timeout=30000", MULTITOOL]  # fmt: skip
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            done = subprocess.CompletedProcess(command, -1, "", "timed out after 300 s")
        if done.returncode != 0 or _binary(staging) is None:
            shutil.rmtree(staging, ignore_errors=True)
            if done.returncode != 0:
                errors = [line for line in done.stderr.splitlines() if line.startswith("npm error")]
                reason = " | ".join(errors[:3]) or done.stderr.strip()[-300:]
                pytest.skip(f"npm install {MULTITOOL} failed (registry unreachable?): {reason}")
            pytest.skip(f"{MULTITOOL} has no native binary for {sys.platform}")
        shutil.rmtree(CACHE, ignore_errors=True)
        os.replace(staging, CACHE)  # whole installs only: an interrupted one is redone next time
        binary = _binary(CACHE)
        assert binary is not None
    if not os.access(binary, os.X_OK):  # npm >= 11 skips the package's `chmod u+x` postinstall
        binary.chmod(binary.stat().st_mode | 0o100)
    try:
        probe = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=120)
    except OSError as exc:
        pytest.skip(f"the SARIF Multitool binary cannot start here: {exc}")
    if probe.returncode != 0:
        pytest.skip(f"the SARIF Multitool binary cannot start here: {(probe.stderr or probe.stdout)[-500:]}")
    return binary


def validate(binary: Path, sarif: Path, out: Path) -> list[tuple[str, str, str]]:
    """(level, rule id, message) of every result the Gh, Ghas and Sarif rules report, notes included."""
    command = [
        str(binary), "validate", str(sarif), "--output", str(out), "--log", "ForceOverwrite",
        "--rule-kind", "Gh;Ghas;Sarif", "--level", "Error;Warning;Note",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert out.is_file(), f"the multitool wrote no log ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    log = json.loads(out.read_text(encoding="utf-8-sig"))
    run = log["runs"][0]
    assert run["invocations"][0]["executionSuccessful"], done.stdout
    return [
        (r.get("level", "warning"), r["ruleId"], json.dumps(r["message"])) for r in run.get("results", [])
    ]


def assert_accepted(findings: list[tuple[str, str, str]]) -> None:
    blocking = [f for f in findings if f[0] != "note" or f[1] not in ADVISORY_NOTES]
    assert blocking == [], "\n".join(" ".join(f) for f in blocking)


def test_the_multitool_flags_what_github_would_reject(multitool: Path, tmp_path: Path) -> None:
    """The check has teeth: a driver without a version and a result without a message text fail it."""
    document = json.loads((GOLDEN_DIR / "report.sarif").read_text(encoding="utf-8"))
    del document["runs"][0]["tool"]["driver"]["version"]
    del document["runs"][0]["tool"]["driver"]["semanticVersion"]
    document["runs"][0]["results"][0]["message"] = {"id": "nothing"}
    broken = tmp_path / "broken.sarif"
    broken.write_text(json.dumps(document), encoding="utf-8")
    rules = {
        rule for level, rule, _ in validate(multitool, broken, tmp_path / "out.sarif") if level != "note"
    }
    assert {"SARIF2005", "GH1015", "SARIF1012"} <= rules  # no tool version; no message text for GitHub


def test_golden_sarif_is_accepted(multitool: Path, tmp_path: Path) -> None:
    assert_accepted(validate(multitool, GOLDEN_DIR / "report.sarif", tmp_path / "out.sarif"))


def test_sarif_of_a_real_run_over_examples_is_accepted(multitool: Path, tmp_path: Path) -> None:
    sarif = tmp_path / "results.sarif"
    done = run_cli(
        "run", "examples", "-o", str(tmp_path / "run"), "--sarif", str(sarif), "--no-fail", cwd=REPO
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(sarif.read_text(encoding="utf-8"))
    assert document["runs"][0]["results"], "the examples include failing tests: the SARIF must have results"
    assert_accepted(validate(multitool, sarif, tmp_path / "out.sarif"))


def test_sarif_of_validate_diagnostics_is_accepted(multitool: Path, tmp_path: Path) -> None:
    invalid = REPO / "tests" / "fixtures" / "evals" / "invalid"
    done = run_cli(
        "validate", str(invalid / "unknown-key"), str(invalid / "bad-role"), "--format", "sarif", cwd=REPO
    )
    assert done.stdout.strip(), done.stderr
    sarif = tmp_path / "diagnostics.sarif"
    sarif.write_text(done.stdout, encoding="utf-8")
    assert json.loads(done.stdout)["runs"][0]["results"]
    assert_accepted(validate(multitool, sarif, tmp_path / "out.sarif"))
