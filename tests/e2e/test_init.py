"""`agentv-ci init` in a new git repository, through the CLI in a subprocess: what it writes is
valid as written (`validate`, `run --dry-run`, a real keyless `run`, zizmor's default policy on the
workflow), and it never overwrites or writes through a symlink without being told."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agentv_ci import __version__
from tests.cli_helpers import run_cli
from tests.git_repos import git

WRITTEN = [
    ".agentv/targets.yaml",
    "agent/hello_agent.py",
    "evals/hello.eval.yaml",
    ".github/workflows/agentv-ci.yml",
]
PIN = re.compile(r"^\s*- uses: agentevals/action@([0-9a-f]{40}) # (v\d+\.\d+\.\d+)\s*$", re.M)


def _keyless_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}


def _zizmor() -> str | None:
    beside = Path(sys.executable).parent / "zizmor"
    return str(beside) if beside.exists() else shutil.which("zizmor")


def zizmor_default_policy(workflow: Path) -> subprocess.CompletedProcess[str]:
    """zizmor as a user runs it in their own repository: default persona, no config of ours."""
    found = _zizmor()
    if found is None:
        pytest.skip("zizmor is not installed (a dev dependency: pip install -e '.[dev]')")
    return subprocess.run(
        [found, "--offline", "--no-config", "--format", "plain", str(workflow)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "my-project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    return root


def test_init_writes_a_project_that_validates_runs_and_passes_zizmor(repo: Path) -> None:
    done = run_cli("init", cwd=repo, env=_keyless_env())
    assert done.returncode == 0, done.stdout + done.stderr
    for name in WRITTEN:
        assert (repo / name).is_file(), name
        assert f"wrote {name}" in done.stdout, done.stdout
    assert "agentv-ci run evals/ --dry-run" in done.stdout  # the next commands
    assert "git ls-remote https://github.com/agentevals/action refs/heads/release/" in done.stdout

    env = _keyless_env()
    checked = run_cli("validate", "evals/", cwd=repo, env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "0 error(s), 0 warning(s)" in checked.stdout, checked.stdout
    for args in (["evals/", "--dry-run"], ["evals/", "--dry-run", "--target", "openai"], ["evals/"]):
        ran = run_cli("run", *args, cwd=repo, env=env, timeout=300)
        assert ran.returncode == 0, f"run {args}:\n{ran.stdout}{ran.stderr}"
    assert "2 passed" in ran.stdout.lower() or "2/2" in ran.stdout, ran.stdout  # the real run ran both

    workflow = repo / ".github" / "workflows" / "agentv-ci.yml"
    text = workflow.read_text(encoding="utf-8")
    [(sha, version)] = PIN.findall(text)
    assert sha == "0" * 40 and version == f"v{__version__}"
    parsed = yaml.safe_load(text)
    assert parsed["permissions"] == {}
    [job] = parsed["jobs"].values()
    assert job["permissions"] == {"contents": "read", "pull-requests": "write"}
    [checkout] = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/checkout@")]
    assert checkout["with"]["persist-credentials"] is False
    audit = zizmor_default_policy(workflow)
    assert audit.returncode == 0 and "No findings to report" in audit.stdout + audit.stderr, (
        audit.stdout + audit.stderr
    )


def test_a_broken_agent_makes_the_example_red(repo: Path) -> None:
    assert run_cli("init", cwd=repo).returncode == 0
    script = repo / "agent" / "hello_agent.py"
    script.write_text(script.read_text().replace('f"Hello, {name}!"', 'f"Goodbye, {name}!"'))
    ran = run_cli("run", "evals/", cwd=repo, env=_keyless_env(), timeout=300)
    assert ran.returncode == 1, ran.stdout + ran.stderr


def test_init_never_overwrites_without_force(repo: Path) -> None:
    assert run_cli("init", str(repo)).returncode == 0
    targets = repo / ".agentv" / "targets.yaml"
    targets.write_text("targets: []  # mine\n")
    (repo / "evals" / "hello.eval.yaml").unlink()  # one file missing: still nothing is written

    again = run_cli("init", str(repo))
    assert again.returncode == 2, again.stdout + again.stderr
    for name in (".agentv/targets.yaml", "agent/hello_agent.py", ".github/workflows/agentv-ci.yml"):
        assert f"{repo / name}: error[E008]: already exists" in again.stderr, again.stderr
    assert "nothing was written" in again.stderr and "--force" in again.stderr
    assert "Traceback" not in again.stderr
    assert targets.read_text() == "targets: []  # mine\n"
    assert not (repo / "evals" / "hello.eval.yaml").exists()

    forced = run_cli("init", str(repo), "--force")
    assert forced.returncode == 0, forced.stdout + forced.stderr
    assert "name: agent" in targets.read_text()
    assert (repo / "evals" / "hello.eval.yaml").is_file()


def test_init_refuses_to_write_through_a_symlink(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / ".agentv").symlink_to(outside)
    done = run_cli("init", str(repo), "--force")
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{repo / '.agentv'}: error[E007]" in done.stderr, done.stderr
    assert list(outside.iterdir()) == []
    assert not (repo / "evals").exists()


def test_init_pins_the_commit_it_is_given(repo: Path) -> None:
    bad = run_cli("init", str(repo), "--action-sha", "v1")
    assert bad.returncode == 2 and "40 lower-case hex" in bad.stderr, bad.stderr
    assert not (repo / ".agentv").exists()

    sha = "3f786850e387550fdab836ed7e6dc881de23001b"
    done = run_cli("init", str(repo), "--action-sha", sha, "--action-version", "v1.2.3")
    assert done.returncode == 0, done.stderr
    assert "placeholder" not in done.stdout
    workflow = repo / ".github" / "workflows" / "agentv-ci.yml"
    assert PIN.findall(workflow.read_text()) == [(sha, "v1.2.3")]
    audit = zizmor_default_policy(workflow)
    assert audit.returncode == 0, audit.stdout + audit.stderr


def test_a_directory_where_a_file_goes_is_refused_even_with_force(repo: Path) -> None:
    (repo / "evals" / "hello.eval.yaml").mkdir(parents=True)
    done = run_cli("init", str(repo), "--force")
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{repo / 'evals' / 'hello.eval.yaml'}: error[E008]: is a directory" in done.stderr, done.stderr
    assert not (repo / ".agentv").exists()
