"""The `agentv-ci-validate` hook of `.pre-commit-hooks.yaml`, run by the real pre-commit on a scratch
project: pre-commit clones this repository at a commit, installs it into a hook environment of its
own (`language: python`) and runs the hook on the staged files at each `git commit`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import USER_CACHE_HOME
from tests.fresh_venv import wheelhouse
from tests.git_repos import GIT_ENV, git, snapshot_repository

TARGETS = "targets:\n  - name: default\n    provider: mock\n    response: hi\n"
GOOD = "name: good\ntests:\n  - id: t\n    input: hi\n    expected_output: hi\n"
BAD = "name: bad\ntests:\n  - id: t\n    input: hi\n    criteria: ok\n    execution:\n      threshold: 7\n"
RECORDING = '{"test_id": "t", "output": "hi"}\n'  # replayed answers: a .jsonl that is no dataset
DATASET = '{"id": "t", "input": "hi", "expected_output": "hi"}\n'
SIDECAR = "name: cases\nexecution:\n  threshold: 0.8\n"  # the YAML sidecar of cases.jsonl
# YAML files of other tools: matched by the hook's pattern, skipped as no eval file
OTHER_YAML = {
    ".github/workflows/ci.yml": "on: push\n",
    "deploy/targets.yaml": "targets:\n  - job: node\n",  # not ours: no eval file reads it
    "config.yaml": "tests: [1, 2]\n",
}


def _commit(project: Path, env: dict[str, str], message: str) -> tuple[int, str]:
    """`git commit` of everything (the hook runs in it); its exit code and what it printed."""
    git(project, "add", "-A")
    done = subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", message],
        cwd=project, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    return done.returncode, done.stdout + done.stderr


@pytest.mark.slow
def test_the_hook_blocks_a_commit_of_a_bad_eval_or_targets_file_and_passes_good_ones(tmp_path: Path) -> None:
    hooks = snapshot_repository(tmp_path / "agentv-ci")
    rev = git(hooks, "rev-parse", "HEAD").strip()
    project = tmp_path / "project"
    (project / "evals" / ".agentv").mkdir(parents=True)
    git(project, "init", "-q", "-b", "main")
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hooks}\n    rev: {rev}\n    hooks:\n      - id: agentv-ci-validate\n"
    )
    (project / "evals" / ".agentv" / "targets.yaml").write_text(TARGETS)
    (project / "evals" / "good.eval.yaml").write_text(GOOD)
    (project / "evals" / "answers.jsonl").write_text(RECORDING)
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV" and not k.startswith("PRE_COMMIT")}
    env.update(GIT_ENV)
    env.update(
        {"PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "PIP_CACHE_DIR": str(USER_CACHE_HOME / "pip")}
    )
    # The hook environment's dependencies (and the build's setuptools) from the tests' wheelhouse,
    # not the index: pre-commit still clones and installs agentv-ci itself, with its own pip.
    house = wheelhouse(USER_CACHE_HOME / "agentv-ci-tests")
    env.update({"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(house), "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # this venv's pre-commit
    installed = subprocess.run(
        ["pre-commit", "install"], cwd=project, env=env, capture_output=True, text=True, timeout=120
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr

    # Good eval file, its targets file and a recording (skipped, not an eval file): the commit goes in.
    code, out = _commit(project, env, "good")
    assert code == 0, out
    assert re.search(r"^agentv-ci validate\.+Passed$", out, re.M), out

    # A bad eval file: the commit is refused, the problem located at its line.
    (project / "evals" / "bad.eval.yaml").write_text(BAD)
    code, out = _commit(project, env, "bad")
    assert code == 1, out
    assert re.search(r"^agentv-ci validate\.+Failed$", out, re.M), out
    assert "evals/bad.eval.yaml:7:18: error[E108]" in out, out
    assert git(project, "rev-list", "--count", "HEAD").strip() == "1"

    # A broken targets file staged alone: checked with the eval file that reads it.
    (project / "evals" / "bad.eval.yaml").unlink()
    git(project, "add", "-A")
    (project / "evals" / ".agentv" / "targets.yaml").write_text(TARGETS.replace("mock", "mokc"))
    code, out = _commit(project, env, "targets")
    assert code == 1, out
    assert "evals/.agentv/targets.yaml:3:5: error[E205]" in out, out
    assert "did you mean `mock`?" in out
    assert git(project, "rev-list", "--count", "HEAD").strip() == "1"

    # A JSONL dataset, its sidecar and other tools' YAML files: checked or skipped, the commit goes in.
    (project / "evals" / ".agentv" / "targets.yaml").write_text(TARGETS)
    (project / "evals" / "cases.jsonl").write_text(DATASET)
    (project / "evals" / "cases.yaml").write_text(SIDECAR)
    for name, text in OTHER_YAML.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    code, out = _commit(project, env, "dataset")
    assert code == 0, out
    assert git(project, "rev-list", "--count", "HEAD").strip() == "2"

    # The sidecar staged alone with a bad threshold: the commit is refused at the sidecar's line.
    (project / "evals" / "cases.yaml").write_text(SIDECAR.replace("0.8", "8"))
    code, out = _commit(project, env, "sidecar")
    assert code == 1, out
    assert "evals/cases.yaml:3:14: error[E108]" in out, out
    assert git(project, "rev-list", "--count", "HEAD").strip() == "2"


def test_the_hook_matches_eval_and_targets_files_and_the_docs_local_hook_matches_the_same() -> None:
    import yaml

    from tests.conftest import REPO_ROOT

    (hook,) = yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text())
    assert (hook["id"], hook["language"]) == ("agentv-ci-validate", "python")
    assert hook["entry"] == "agentv-ci validate --skip-non-eval-files"
    files = re.compile(hook["files"])
    matched = [
        "a/x.eval.yaml",
        "x.EVAL.yml",
        "EVAL.yaml",
        "d/eval.yml",
        "d/cases.jsonl",
        "d/.agentv/targets.yaml",
        "d/cases.yaml",  # a JSONL dataset's sidecar: any YAML name, so every YAML file is passed
        "d/cases.YML",
        "d/.agentv/quarantine.yaml",
    ]
    unmatched = ["d/targets.json", "x.eval.yaml.bak", "d/cases.json", "README.md", "d/x.yaml~"]
    assert [name for name in matched if not files.search(name)] == []
    assert [name for name in unmatched if files.search(name)] == []
    docs = (REPO_ROOT / "docs" / "diagnostics.md").read_text()
    assert f"files: {hook['files']}\n" in docs and f"entry: .venv/bin/{hook['entry']}\n" in docs
