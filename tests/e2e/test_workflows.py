"""action.yml and the example workflows: audited by zizmor, and every use of the action is valid."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentv_ci.github.inputs import INPUTS, read_inputs

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / "examples" / "workflows").glob("*.yml"))


def _steps(workflow: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for job in workflow["jobs"].values() for step in job.get("steps", [])]


def _zizmor() -> str:
    """zizmor is a dev dependency: next to this interpreter, else on PATH. Missing is a failure."""
    beside = Path(sys.executable).parent / "zizmor"
    found = str(beside) if beside.exists() else shutil.which("zizmor")
    assert found, "zizmor is not installed: pip install -e '.[dev]'"
    return found


def test_zizmor_finds_nothing_at_medium_or_above() -> None:
    result = subprocess.run(
        [
            _zizmor(),
            "--offline",
            "--config",
            str(ROOT / "zizmor.yml"),
            "--min-severity",
            "medium",
            "--format",
            "plain",
            *map(str, WORKFLOWS),
            str(ROOT / "action.yml"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No findings to report" in result.stdout + result.stderr


def test_the_examples_cover_pr_main_fork_and_sharded_runs() -> None:
    names = {p.stem for p in WORKFLOWS}
    assert {"evals-pr", "evals-main", "evals-fork-comment", "evals-sharded"} <= names


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.stem)
def test_every_use_of_the_action_passes_valid_inputs(path: Path) -> None:
    workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
    uses = [s for s in _steps(workflow) if str(s.get("uses", "")).startswith("agentevals/action@")]
    assert uses, f"{path.name} does not use the action"
    for step in uses:
        given = {str(k): str(v) for k, v in (step.get("with") or {}).items()}
        assert set(given) <= set(INPUTS), set(given) - set(INPUTS)
        literal = {f"INPUT_{k.upper()}": v for k, v in given.items() if "${{" not in v}
        read_inputs(literal)  # raises on a value the action would refuse


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.stem)
def test_least_privilege(path: Path) -> None:
    workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert workflow.get("permissions") == {}, "workflow-level permissions must be empty"
    for name, job in workflow["jobs"].items():
        assert "permissions" in job, f"job {name} must declare its permissions"
        assert "write-all" not in str(job["permissions"])
    for step in _steps(workflow):
        uses = str(step.get("uses", ""))
        if uses.startswith("actions/checkout@"):
            assert step["with"]["persist-credentials"] is False


def test_pr_workflows_fetch_the_history_selection_needs() -> None:
    for name in ("evals-pr", "evals-sharded"):
        workflow = yaml.safe_load((ROOT / "examples" / "workflows" / f"{name}.yml").read_text())
        checkouts = [s for s in _steps(workflow) if str(s.get("uses", "")).startswith("actions/checkout@")]
        assert any(s["with"].get("fetch-depth") == 0 for s in checkouts), name


def test_the_readme_workflow_uses_valid_inputs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [b.split("```", 1)[0] for b in readme.split("```yaml\n")[1:]]
    workflows = [yaml.safe_load(b) for b in blocks if "agentevals/action@" in b]
    assert workflows, "the README shows no workflow using the action"
    for workflow in workflows:
        for step in _steps(workflow):
            if str(step.get("uses", "")).startswith("agentevals/action@"):
                given = {str(k): str(v) for k, v in step["with"].items()}
                assert set(given) <= set(INPUTS)
                read_inputs({f"INPUT_{k.upper()}": v for k, v in given.items()})
