"""`workspace.docker` is loaded (AgentV v4.42.4's `{image, timeout, memory, cpus}` plus `network`),
each bad field reported at its own line and column, and AgentV's own docker example validates."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agentv_ci.loading.suite_loader import load_suite
from agentv_ci.model.workspace import DockerWorkspace, ImageRepo
from tests.cli_helpers import run_cli

MIRROR = Path("/work/.mirror/EntityProcess+agentv/repo")
EXAMPLE = "examples/features/docker-workspace/evals/docker-example.EVAL.yaml"


def _load(tmp_path: Path, docker: str, test_workspace: str = "") -> tuple[object, list[str]]:
    (tmp_path / ".git").mkdir(exist_ok=True)
    path = tmp_path / "d.eval.yaml"
    path.write_text(
        f"workspace:\n  docker:\n{docker}tests:\n  - id: a\n    input: hi\n    criteria: c\n{test_workspace}"
    )
    result = load_suite(path, repo_root=tmp_path)
    found = [f"{d.line}:{d.col} {d.code} {d.message}" for d in result.diagnostics]
    return result.suite, found


def test_all_fields_are_loaded(tmp_path: Path) -> None:
    suite, found = _load(
        tmp_path,
        "    image: python:3.11-slim\n    timeout: 60\n    memory: 2g\n    cpus: 0.5\n    network: none\n",
    )
    assert found == []
    assert suite is not None
    docker = suite.tests[0].workspace.docker  # type: ignore[attr-defined]
    assert docker == DockerWorkspace(
        image="python:3.11-slim", timeout=60, memory="2g", cpus=0.5, network="none"
    )


def test_defaults_are_agentvs(tmp_path: Path) -> None:
    suite, found = _load(tmp_path, "    image: python:3.11-slim\n")
    assert found == []
    docker = suite.tests[0].workspace.docker  # type: ignore[attr-defined]
    assert (docker.timeout, docker.memory, docker.cpus, docker.network) == (1800, None, None, None)


def test_a_test_workspace_replaces_the_suites_docker(tmp_path: Path) -> None:
    suite, found = _load(
        tmp_path, "    image: python:3.11-slim\n", "    workspace:\n      docker:\n        image: alpine:3\n"
    )
    assert found == []
    assert suite.tests[0].workspace.docker.image == "alpine:3"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ("    timeout: 60\n", "3:5 E102 workspace.docker needs an `image`"),
        ("    image: --privileged\n", "3:12 E103 workspace.docker.image must be an image reference"),
        ("    image: [a]\n", "3:12 E103 workspace.docker.image must be an image reference"),
        ("    image: x\n    timeout: 0\n", "4:14 E110 workspace.docker.timeout must be a whole number"),
        ("    image: x\n    timeout: 1.5\n", "4:14 E110 workspace.docker.timeout must be a whole number"),
        ("    image: x\n    memory: lots\n", "4:13 E103 workspace.docker.memory must be a size"),
        ("    image: x\n    cpus: 0.05\n", "4:11 E110 workspace.docker.cpus must be a number from 0.1"),
        ("    image: x\n    cpus: two\n", "4:11 E110 workspace.docker.cpus must be a number from 0.1"),
        (
            "    image: x\n    network: host\n",
            "4:14 E103 workspace.docker.network must be one of none, bridge",
        ),
        ("    image: x\n    volumes: [/:/host]\n", "4:5 W101 unknown key `volumes` in workspace.docker"),
    ],
)
def test_bad_fields_are_located(tmp_path: Path, fields: str, expected: str) -> None:
    _suite, found = _load(tmp_path, fields)
    assert any(line.startswith(expected) for line in found), found
    assert not any(" E114 " in line for line in found)


def test_agentvs_docker_example_validates(tmp_path: Path) -> None:
    if not (MIRROR / "HEAD").exists():
        pytest.skip("the AgentV mirror is not on this machine (/work/.mirror/EntityProcess+agentv)")
    text = subprocess.run(
        ["git", "--git-dir", str(MIRROR), "show", f"v4.42.4:{EXAMPLE}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (tmp_path / ".git").mkdir()
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text("targets:\n  - name: dry-run\n    provider: mock\n")
    (tmp_path / "docker-example.EVAL.yaml").write_text(text)
    done = run_cli("validate", str(tmp_path / "docker-example.EVAL.yaml"), cwd=tmp_path, timeout=60)
    assert "E114" not in done.stdout and "error[" not in done.stdout, done.stdout
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("level", ["suite", "test"])
def test_a_script_only_the_image_holds_is_not_looked_for_on_the_host(tmp_path: Path, level: str) -> None:
    (tmp_path / ".git").mkdir()
    grader = "    assertions:\n      - type: code-grader\n        command: [python3, /testbed/run_tests.py]\n"
    docker = "workspace:\n  docker:\n    image: python:3.11-slim\n"
    if level == "suite":
        text = f"{docker}tests:\n  - id: a\n    input: hi\n{grader}"
    else:
        nested = docker.replace("\n  ", "\n      ")
        text = f"tests:\n  - id: a\n    input: hi\n{grader}    {nested}"
    (tmp_path / "d.eval.yaml").write_text(text)
    result = load_suite(tmp_path / "d.eval.yaml", repo_root=tmp_path)
    assert [d.code for d in result.diagnostics if d.code.startswith("E")] == []
    # The same grader without a docker workspace: the script must exist (E301 at the argument).
    (tmp_path / "h.eval.yaml").write_text(f"tests:\n  - id: a\n    input: hi\n{grader}")
    result = load_suite(tmp_path / "h.eval.yaml", repo_root=tmp_path)
    assert [(d.code, d.line) for d in result.diagnostics if d.code.startswith("E")] == [("E301", 6)]


def test_a_repo_without_repo_is_a_repository_inside_the_image(tmp_path: Path) -> None:
    suite, found = _load(
        tmp_path,
        "    image: swebench/x\n  repos:\n    - path: /testbed\n      base_commit: abc123\n"
        "    - base_commit: def456\n      ancestor: 1\n",
    )
    assert found == [
        "8:7 W110 `ancestor` of a repository inside the docker image is not run (AgentV ignores it too)"
    ]
    workspace = suite.tests[0].workspace  # type: ignore[attr-defined]
    assert workspace.repos == []  # nothing is cloned on the host
    assert workspace.image_repos == [ImageRepo(path="/testbed", commit="abc123"), ImageRepo(commit="def456")]


def test_a_repo_without_repo_needs_docker(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "d.eval.yaml").write_text(
        "workspace:\n  repos:\n    - path: testbed\n      base_commit: abc123\n"
        "tests:\n  - id: a\n    input: hi\n    criteria: c\n"
    )
    result = load_suite(tmp_path / "d.eval.yaml", repo_root=tmp_path)
    assert [(d.code, d.line, d.hint) for d in result.diagnostics] == [
        ("E102", 3, "an entry without `repo` (a repository in the image) needs `docker` in its workspace")
    ]
