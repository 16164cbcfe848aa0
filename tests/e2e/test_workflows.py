"""action.yml, the example workflows and the project's own workflows (.github/workflows: CI and the
release): audited by zizmor, least privilege, actions pinned by SHA, and every use of the action valid."""

from __future__ import annotations

import re
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
OWN_WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
# `uses: owner/repo@<40 hex> # vX.Y.Z`: a full commit SHA with the version it is, for reviewers
# and Dependabot.
PINNED = re.compile(r"^\s*(?:- )?uses: [\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+\s*$")


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


def test_zizmor_finds_nothing_at_all_in_the_projects_own_workflows() -> None:
    """Every severity and confidence, the pedantic persona: not one finding on .github/workflows."""
    result = subprocess.run(
        [
            _zizmor(),
            "--offline",
            "--config",
            str(ROOT / "zizmor.yml"),
            "--persona",
            "pedantic",
            "--format",
            "plain",
            str(ROOT / ".github" / "workflows"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "No findings to report" in out
    for path in OWN_WORKFLOWS:
        assert f"completed .github/workflows/{path.name}" in out or path.name in out, out


def test_the_project_has_ci_and_release_workflows() -> None:
    assert {p.stem for p in OWN_WORKFLOWS} >= {"ci", "release"}
    ci = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text(encoding="utf-8"))
    assert set(ci[True]) == {"push", "pull_request"}  # PyYAML reads the `on:` key as True
    runs = [str(s.get("run", "")) for s in _steps(ci)]
    assert "make test" in runs  # the README's test command
    release = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))
    assert release[True]["push"] == {"tags": ["v*.*.*"]}
    assert release[True]["workflow_dispatch"]["inputs"]["dry_run"]["default"] is True


@pytest.mark.parametrize("path", OWN_WORKFLOWS, ids=lambda p: p.stem)
def test_every_action_is_pinned_by_commit_sha_with_its_version(path: Path) -> None:
    text = path.read_text(encoding="utf-8").splitlines()
    lines = [line for line in text if "uses:" in line and not line.lstrip().startswith("#")]
    assert lines, f"{path.name} uses no action"
    for line in lines:
        assert PINNED.match(line), f"{path.name}: not pinned by SHA with a version comment: {line.strip()}"


def test_release_permissions_are_granted_only_where_used() -> None:
    """id-token: write on the PyPI job only, packages: write on the image job only, contents: write
    on the job that pushes the release commit and moves the major tag only."""
    release = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))
    jobs = release["jobs"]
    holders: dict[str, set[str]] = {}
    for name, job in jobs.items():
        for scope, level in job["permissions"].items():
            if level == "write":
                holders.setdefault(scope, set()).add(name)
    assert holders == {"id-token": {"pypi"}, "packages": {"image"}, "contents": {"action"}}
    assert jobs["pypi"]["permissions"] == {"id-token": "write"}
    [publish] = [s for s in jobs["pypi"]["steps"] if "gh-action-pypi-publish" in str(s.get("uses"))]
    assert "password" not in (publish.get("with") or {})  # trusted publishing: no stored token
    for step in _steps(release):
        assert "${{" not in str(step.get("run", "")), f"an expression pasted into a shell: {step}"


def test_main_keeps_building_the_action_from_the_dockerfile() -> None:
    """Until a release commit pins it, `uses: ./` (tests, act) builds the image from the Dockerfile."""
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "docker" and action["runs"]["image"] == "Dockerfile"


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


@pytest.mark.parametrize("path", WORKFLOWS + OWN_WORKFLOWS, ids=lambda p: f"{p.parent.name}/{p.stem}")
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


def test_the_readme_workflow_passes_zizmors_default_policy(tmp_path: Path) -> None:
    """As a user pastes it into their repository: zizmor's default policy, none of our config."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    [block] = [b.split("```", 1)[0] for b in readme.split("```yaml\n")[1:] if "agentevals/action@" in b]
    workflow = tmp_path / ".github" / "workflows" / "evals.yml"
    workflow.parent.mkdir(parents=True)
    workflow.write_text(block, encoding="utf-8")
    result = subprocess.run(
        [_zizmor(), "--offline", "--no-config", "--format", "plain", str(workflow)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    out = result.stdout + result.stderr
    assert result.returncode == 0 and "No findings to report" in out, out
