"""The real container and the real Action: the project's Dockerfile built with Docker, and a workflow
with `uses: ./` run by `act` (a GitHub Actions runner emulator) against the fake GitHub API.

Docker is prepared by `../shared/tools/container-base.sh` (which `.ci/run` calls when it is there):
it starts the engine and builds the local `python:3.11-slim` and `local/act-runner:bookworm` images,
since no registry is reachable. Where Docker cannot start, these tests skip and say why.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.scaffold import FAILING, PASSING
from tests.fakes.github_server import FakeGitHub
from tests.git_repos import git
from tests.session_once import once_per_session

ROOT = Path(__file__).resolve().parents[2]
IMAGES = ("python:3.11-slim", "local/act-runner:bookworm")


def _docker_problem() -> str | None:
    if shutil.which("docker") is None:
        return "docker is not installed (run ../shared/tools/container-base.sh)"
    info = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=30)
    if info.returncode != 0:
        return "the Docker engine is not running (run ../shared/tools/container-base.sh)"
    for image in IMAGES:
        found = subprocess.run(["docker", "image", "inspect", image], capture_output=True, timeout=30)
        if found.returncode != 0:
            return f"the base image {image} is missing (run ../shared/tools/container-base.sh)"
    return None


_PROBLEM = _docker_problem()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(_PROBLEM is not None, reason=_PROBLEM or "")]


def _copy_project(dest: Path) -> None:
    """What the image is built from (the Dockerfile's build context), as in a checkout."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("Dockerfile", ".dockerignore", "action.yml", "pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, dest / name)
    ignore = shutil.ignore_patterns("*.egg-info", "__pycache__", "*.pyc", "build", "dist", ".pytest_cache")
    shutil.copytree(ROOT / "src", dest / "src", ignore=ignore)
    shutil.copytree(ROOT / "plugins", dest / "plugins", ignore=ignore)


@pytest.fixture(scope="session")
def image(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The project's image, built once per session for every file and xdist worker that uses it."""
    tag = "agentv-ci:test"

    def build(context: Path) -> None:
        _copy_project(context)
        subprocess.run(
            ["docker", "build", "-q", "-t", tag, str(context)], check=True, capture_output=True, timeout=900
        )

    once_per_session(tmp_path_factory, "agentv-ci-image", build)
    return tag


def _docker_run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", "run", "--rm", *args], capture_output=True, text=True, timeout=timeout)


def test_the_image_is_small_and_has_no_build_tools(image: str) -> None:
    version = _docker_run(image, "--version")
    assert version.returncode == 0 and version.stdout.startswith("agentv-ci ")
    size = int(
        subprocess.run(
            ["docker", "image", "inspect", "-f", "{{.Size}}", image],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert size < 450 * 1024 * 1024, f"image is {size / 2**20:.0f} MiB"
    tools = _docker_run("--entrypoint", "sh", image, "-c", "command -v gcc cc make || true")
    assert tools.stdout.strip() == ""
    assert _docker_run("--entrypoint", "git", image, "--version").returncode == 0


def test_the_image_ships_the_in_repo_plugins(image: str) -> None:
    listed = _docker_run(image, "plugins", "--json")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    plugins = {(p["kind"], p["name"]): p for p in json.loads(listed.stdout)["plugins"]}
    expected = {
        ("reporter", "html"): "agentv-ci-html-report",
        ("grader", "json-schema"): "agentv-ci-jsonschema",
        ("grader", "text-stats"): "agentv-ci-text-stats-grader",
    }
    for key, distribution in expected.items():
        assert key in plugins, f"{key} is not in the image"
        assert plugins[key]["distribution"] == distribution and plugins[key]["error"] is None, plugins[key]


def test_the_image_writes_the_html_report(image: str, tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    (workspace / ".agentv").mkdir(parents=True)
    (workspace / ".agentv" / "targets.yaml").write_text("targets:\n  - name: default\n    provider: mock\n")
    (workspace / "geo.eval.yaml").write_text(PASSING)
    done = _docker_run(
        "-v", f"{workspace}:/github/workspace", image,
        "run", "geo.eval.yaml", "-o", "out", "--report", "html=out/report.html",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    page = (workspace / "out" / "report.html").read_text(encoding="utf-8")
    assert page.lstrip().lower().startswith("<!doctype html") and "geo" in page


# The derived-image recipe docs/github.md gives for third-party plugins: FROM the image, pip install.
THIRD_PARTY_PYPROJECT = """\
[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "acme-shouting-grader"
version = "1.0.0"
dependencies = ["agentv-ci>=0.1"]

[project.entry-points."agentv_ci.graders"]
acme-shouting = "acme_shouting:Shouting"
"""

THIRD_PARTY_MODULE = """\
from agentv_ci.api import answer_text, pass_fail_result


class Shouting:
    api_version = "1.0"
    config_schema = {"type": "object", "additionalProperties": False}

    def __init__(self, spec, config, *, base_dir):
        self.spec = spec

    async def grade(self, ctx):
        text = answer_text(ctx.response)
        return pass_fail_result(self.spec, text.isupper(), "all upper case")
"""


def test_a_plugin_installed_in_a_derived_image_is_seen(image: str, tmp_path: Path) -> None:
    plugin = tmp_path / "plugin"
    (plugin / "acme_shouting").mkdir(parents=True)
    (plugin / "pyproject.toml").write_text(THIRD_PARTY_PYPROJECT)
    (plugin / "acme_shouting" / "__init__.py").write_text(THIRD_PARTY_MODULE)
    (tmp_path / "Dockerfile").write_text(f"FROM {image}\nCOPY plugin /plugin\nRUN pip install /plugin\n")
    before = _docker_run(image, "plugins")
    assert "acme-shouting" not in before.stdout  # not in the released image: the recipe adds it
    subprocess.run(
        ["docker", "build", "-q", "-t", "agentv-ci:test-plugin", str(tmp_path)],
        check=True,
        capture_output=True,
        timeout=900,
    )
    listed = _docker_run("agentv-ci:test-plugin", "plugins", "--json")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    plugins = {(p["kind"], p["name"]): p for p in json.loads(listed.stdout)["plugins"]}
    added = plugins[("grader", "acme-shouting")]
    assert added["distribution"] == "acme-shouting-grader" and added["error"] is None, added
    assert ("reporter", "html") in plugins  # the shipped plugins stay


def test_files_written_in_the_workspace_belong_to_its_owner(image: str, tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    (workspace / ".agentv").mkdir(parents=True)
    (workspace / ".agentv" / "targets.yaml").write_text("targets:\n  - name: default\n    provider: mock\n")
    (workspace / "geo.eval.yaml").write_text(PASSING)
    for path in (workspace, *workspace.rglob("*")):
        os.chown(path, 1001, 1001)
    done = _docker_run(
        "-v",
        f"{workspace}:/github/workspace",
        "-e",
        "GITHUB_WORKSPACE=/github/workspace",
        "-e",
        "GITHUB_ACTIONS=true",
        "-e",
        "INPUT_COMMENT=false",
        "--entrypoint",
        "/usr/local/bin/agentv-ci-action",
        image,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    written = [workspace / ".agentv-ci", *(workspace / ".agentv-ci").rglob("*")]
    assert any(p.name == "index.jsonl" for p in written)
    assert {p.stat().st_uid for p in written} == {1001}


def test_the_response_cache_in_the_workspace_is_reused_by_the_next_container(
    image: str, tmp_path: Path
) -> None:
    """`cache: true` in the real container: the default `cache_dir` lies in the mounted workspace,
    belongs to the workspace's owner afterwards (so `actions/cache` can save it), and the next
    container (a new job with that directory restored) answers from it."""
    workspace = tmp_path / "workspace"
    (workspace / ".agentv").mkdir(parents=True)
    (workspace / ".agentv" / "targets.yaml").write_text("targets:\n  - name: default\n    provider: mock\n")
    (workspace / "geo.eval.yaml").write_text(PASSING)
    for path in (workspace, *workspace.rglob("*")):
        os.chown(path, 1001, 1001)
    args = ["-v", f"{workspace}:/github/workspace", "-e", "GITHUB_WORKSPACE=/github/workspace"]
    args += ["-e", "GITHUB_ACTIONS=true", "-e", "INPUT_COMMENT=false", "-e", "INPUT_CACHE=true"]
    args += ["--entrypoint", "/usr/local/bin/agentv-ci-action", image]
    summaries = []
    for _ in range(2):
        done = _docker_run(*args)
        assert done.returncode == 0, done.stdout + done.stderr
        summary = json.loads((workspace / ".agentv-ci" / "results" / "summary.json").read_text())
        summaries.append(summary["cache"])
    assert (summaries[0]["hits"], summaries[0]["misses"]) == (0, 1)
    assert (summaries[1]["hits"], summaries[1]["misses"]) == (1, 0)
    cache = workspace / ".agentv-ci" / "response-cache"
    assert len(list(cache.glob("??/*.json"))) == 1 and (cache / "origin.json").is_file()
    assert {p.stat().st_uid for p in [cache, *cache.rglob("*")]} == {1001}


WORKFLOW = """\
name: evals
on: pull_request
jobs:
  evals:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0
      - id: evals
        uses: ./
        with:
          paths: evals
          threshold: "0.5"
      - if: always()
        env:
          VERDICT: ${{ steps.evals.outputs.verdict }}
          FAILED: ${{ steps.evals.outputs.failed }}
          RESULTS: ${{ steps.evals.outputs.results_path }}
          COMMENT: ${{ steps.evals.outputs.comment_url }}
        run: echo "outputs verdict=$VERDICT failed=$FAILED results=$RESULTS comment=$COMMENT"
"""


def _act() -> str:
    beside = Path(sys.executable).parent / "act"
    found = str(beside) if beside.exists() else shutil.which("act")
    assert found, "act is not installed (it is a dev dependency: pip install -e '.[dev]')"
    return found


def test_the_action_runs_under_act_and_comments_on_the_fake_api(
    tmp_path: Path, github_server: FakeGitHub
) -> None:
    repo = tmp_path / "repo"
    _copy_project(repo)
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "evals.yml").write_text(WORKFLOW)
    (repo / ".agentv").mkdir()
    (repo / ".agentv" / "targets.yaml").write_text("targets:\n  - name: default\n    provider: mock\n")
    (repo / "evals").mkdir()
    (repo / "evals" / "geo.eval.yaml").write_text(PASSING)
    (repo / "evals" / "math.eval.yaml").write_text(PASSING.replace("capital", "add"))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-qb", "feature")
    (repo / "evals" / "math.eval.yaml").write_text(FAILING)
    git(repo, "commit", "-qam", "break math")
    head = git(repo, "rev-parse", "HEAD")
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps(
            {
                "number": 7,
                "pull_request": {
                    "number": 7,
                    "base": {"sha": base, "ref": "main", "repo": {"full_name": "octo/demo"}},
                    "head": {"sha": head, "ref": "feature", "repo": {"full_name": "octo/demo"}},
                },
                "repository": {"full_name": "octo/demo"},
            }
        )
    )
    command = [
        _act(),
        "pull_request",
        "-e",
        str(event),
        "-W",
        ".github/workflows/evals.yml",
        "-P",
        "ubuntu-latest=local/act-runner:bookworm",
        "--pull=false",
        "--rm",
        "--env",
        f"GITHUB_API_URL={github_server.base_url}",
        "--env",
        "GITHUB_REPOSITORY=octo/demo",
        "-s",
        f"GITHUB_TOKEN={FakeGitHub.INSTALLATION}",
    ]

    first = subprocess.run(command, cwd=repo, capture_output=True, text=True, timeout=900)
    log = first.stdout + first.stderr

    assert first.returncode != 0, log  # the eval gate fails the job
    assert "outputs verdict=failed failed=1 results=.agentv-ci/results/index.jsonl comment=http" in log, log
    assert "selected 1 of 2 eval file(s)" in log
    [comment] = github_server.comments_on(7)
    assert "FAILED" in comment.body and "agentv-ci:sticky-comment" in comment.body
    assert FakeGitHub.INSTALLATION not in log.replace(f"::add-mask::{FakeGitHub.INSTALLATION}", "")

    second = subprocess.run(command, cwd=repo, capture_output=True, text=True, timeout=900)
    assert "outputs verdict=failed" in second.stdout + second.stderr
    assert [c.id for c in github_server.comments_on(7)] == [comment.id]
    assert len(github_server.calls("PATCH", "/comments")) == 1
