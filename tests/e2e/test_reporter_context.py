"""The reporter contract's typed context (issue 30): a reporter plugin reads the gate decision, the
selection and the SARIF category as named fields of a frozen `ReportOptions` (plugin API 1.1), and a
reporter written for API 1.0 that reads `options.extras` still gets the same values, read-only.

Both reporters are installed the way pip leaves a distribution (tests/plugin_site.py); each check
runs `agentv-ci` in a fresh subprocess.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import mock_project
from tests.plugin_site import install_distribution, run_with_site

REPORTERS = '''
import dataclasses
import json


class Typed:
    """Reads the typed fields of plugin API 1.1."""

    api_version = "1.1"

    def write(self, summary, options):
        try:
            options.decision = None
            assignable = True
        except dataclasses.FrozenInstanceError:
            assignable = False
        options.path.write_text(json.dumps({
            "passed": options.decision.passed,
            "exit_code": int(options.decision.exit_code),
            "sarif_category": options.sarif_category,
            "repo_root": str(options.repo_root),
            "assignable": assignable,
        }))


class Legacy:
    """Written for plugin API 1.0: reads the decision and the category from `options.extras`."""

    api_version = "1.0"

    def write(self, summary, options):
        extras = options.extras
        try:
            extras["decision"] = None
            writable = True
        except TypeError:
            writable = False
        options.path.write_text(json.dumps({
            "passed": extras["decision"].passed,
            "exit_code": int(extras.get("decision").exit_code),
            "sarif_category": extras.get("sarif_category"),
            "writable": writable,
        }))
'''

ENTRY_POINTS = """\
[agentv_ci.reporters]
typed-report = context_reporters:Typed
legacy-report = context_reporters:Legacy
"""

EVAL = """\
name: capitals
tests:
  - id: france
    input: Capital of France?
    assertions: [{type: equals, value: Paris}]
  - id: spain
    input: Capital of Spain?
    assertions: [{type: equals, value: Madrid}]
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install_distribution(
        tmp_path_factory.mktemp("site"),
        "context-agentv-reporters",
        "1.0",
        module="context_reporters",
        source=REPORTERS,
        entry_points=ENTRY_POINTS,
    )


def test_reporters_read_the_decision_as_a_typed_field_and_through_the_old_extras(
    site: Path, tmp_path: Path
) -> None:
    evals = mock_project(tmp_path / "evals", response="Paris", eval_file="e.eval.yaml", eval_yaml=EVAL)
    reports = tmp_path / "reports"
    args = ["run", str(evals), "-o", str(tmp_path / "out"), "--sarif-category", "evals/nightly"]
    args += ["--report", f"typed-report={reports / 'typed.json'}"]
    args += ["--report", f"legacy-report={reports / 'legacy.json'}"]
    proc = run_with_site(args, site, tmp_path)

    assert proc.returncode == 1, proc.stdout + proc.stderr  # spain fails: the gate decided, exit 1
    assert "error: reporter plugin" not in proc.stderr, proc.stderr
    typed = json.loads((reports / "typed.json").read_text())
    assert typed == {
        "passed": False,
        "exit_code": 1,
        "sarif_category": "evals/nightly",
        "repo_root": typed["repo_root"],
        "assignable": False,
    }
    assert Path(typed["repo_root"]).is_absolute()
    legacy = json.loads((reports / "legacy.json").read_text())
    assert legacy == {"passed": False, "exit_code": 1, "sarif_category": "evals/nightly", "writable": False}
