"""The project's release workflow (.github/workflows/release.yml) run by `act` on a version tag, as a
dry run: act sets ACT, so nothing is pushed, published or tagged, and every build step still runs.

What runs for real: the plan (version from pyproject.toml, checked against the tag), `python -m build`
and `twine check` (build tools from PyPI), the image built from the Dockerfile through the host's
Docker engine and checked to ship the in-repo plugins, and action.yml rewritten to the image by digest
and committed. What is asserted skipped: the registry login and push, the PyPI job, the push of the
release commit and the major tag.

Two stand-ins, because nothing here reaches GitHub: the job image is act's local runner image plus the
host's docker CLI (GitHub's runners have one), and `actions/upload-artifact` is replaced (act's
--local-repository) by a composite action that copies its `path` to a directory this test reads,
since the real action's bundled code cannot be fetched offline. Marked slow: about two minutes.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.test_action_container import _act, _docker_problem
from tests.git_repos import git

ROOT = Path(__file__).resolve().parents[2]
RUNNER = "local/act-runner-docker:test"
_PROBLEM = _docker_problem()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(_PROBLEM is not None, reason=_PROBLEM or "")]

UPLOAD_ARTIFACT_STAND_IN = """\
name: upload-artifact stand-in
description: Copies `path` to /artifacts/<name>, a directory the test binds into the job container.
inputs:
  name: {required: true}
  path: {required: true}
  if-no-files-found: {required: false, default: warn}
  retention-days: {required: false, default: ""}
runs:
  using: composite
  steps:
    - shell: bash
      env:
        NAME: ${{ inputs.name }}
        SOURCE: ${{ inputs.path }}
        IF_NONE: ${{ inputs.if-no-files-found }}
      run: |
        if [ -z "$(ls -A "$SOURCE" 2>/dev/null)" ] && [ "$IF_NONE" = error ]; then exit 1; fi
        mkdir -p "/artifacts/$NAME" && cp -r "$SOURCE"/. "/artifacts/$NAME/"
"""


def _upload_artifact_ref() -> str:
    release = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))
    [uses] = [s["uses"] for s in release["jobs"]["dist"]["steps"] if "upload-artifact" in str(s.get("uses"))]
    return str(uses)


@pytest.fixture(scope="module")
def runner_image(tmp_path_factory: pytest.TempPathFactory) -> str:
    """act's local runner image plus the docker CLI, which the image job calls (the host's engine)."""
    docker = shutil.which("docker")
    assert docker
    context = tmp_path_factory.mktemp("runner")
    shutil.copy2(docker, context / "docker")
    (context / "Dockerfile").write_text(
        "FROM local/act-runner:bookworm\nCOPY docker /usr/local/bin/docker\n", encoding="utf-8"
    )
    subprocess.run(
        ["docker", "build", "-q", "-t", RUNNER, str(context)], check=True, capture_output=True, timeout=300
    )
    probe = subprocess.run(
        ["docker", "run", "--rm", RUNNER, "docker", "--version"], capture_output=True, text=True, timeout=60
    )
    if probe.returncode != 0:
        pytest.skip(f"the host's docker CLI does not run in the job image: {probe.stderr.strip()}")
    return RUNNER


def _project(dest: Path, tag: str) -> Path:
    """A clean clone of this project (its committed files as they are in the tree now), tagged."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-qm", "release")
    git(dest, "tag", tag)
    return dest


def _act_release(tmp_path: Path, runner: str, tag: str) -> tuple[int, list[dict[str, Any]], Path]:
    repo = _project(tmp_path / "repo", tag)
    stand_in = tmp_path / "upload-artifact"
    stand_in.mkdir()
    (stand_in / "action.yml").write_text(UPLOAD_ARTIFACT_STAND_IN, encoding="utf-8")
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps(
            {
                "ref": f"refs/tags/{tag}",
                "repository": {"full_name": "Octo/Demo", "name": "Demo", "owner": {"login": "Octo"}},
            }
        )
    )
    command = [
        _act(),
        "push",
        "-e",
        str(event),
        "-W",
        ".github/workflows/release.yml",
        "-P",
        f"ubuntu-latest={runner}",
        "--pull=false",
        "--rm",
        "--json",
        "--verbose",
        "--container-options",
        f"-v {artifacts}:/artifacts",
        "--local-repository",
        f"{_upload_artifact_ref()}={stand_in}",
        "--env",
        "GITHUB_REPOSITORY=Octo/Demo",
    ]
    done = subprocess.run(command, cwd=repo, capture_output=True, text=True, timeout=1200)
    entries = []
    for line in (done.stdout + done.stderr).splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(entry, dict):
            entries.append(entry)
    return done.returncode, entries, artifacts


def _step_results(entries: list[dict[str, Any]]) -> dict[tuple[str, str], str]:
    return {
        (e["jobID"], e["step"]): e["stepResult"]
        for e in entries
        if "stepResult" in e and e.get("stage") == "Main"
    }


def _job_results(entries: list[dict[str, Any]]) -> dict[str, str]:
    return {e["jobID"]: e["jobResult"] for e in entries if "jobResult" in e}


def _output(entries: list[dict[str, Any]], job: str) -> str:
    return "\n".join(str(e.get("msg", "")) for e in entries if e.get("jobID") == job)


@pytest.fixture(scope="module")
def dry_run(
    tmp_path_factory: pytest.TempPathFactory, runner_image: str
) -> Iterator[tuple[int, list[dict[str, Any]], Path]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    yield _act_release(tmp_path_factory.mktemp("release"), runner_image, f"v{project['version']}")


def test_the_release_runs_under_act_up_to_the_push_steps(
    dry_run: tuple[int, list[dict[str, Any]], Path],
) -> None:
    code, entries, artifacts = dry_run
    log = "\n".join(str(e.get("msg", "")) for e in entries)
    assert code == 0, log[-6000:]
    assert _job_results(entries) == {
        "plan": "success",
        "dist": "success",
        "image": "success",
        "pypi": "skipped",
        "action": "success",
    }
    steps = _step_results(entries)
    # the build steps ran
    assert steps[("dist", "Build the wheel and the sdist (python -m build)")] == "success"
    assert steps[("image", "Build the image and check it ships the in-repo plugins")] == "success"
    assert steps[("action", "Commit action.yml pinned to the image digest")] == "success"
    # every push, publish and tag step was skipped
    for job, step in [
        ("image", "Log in to ghcr.io"),
        ("image", "Build and push the image with provenance and an SBOM"),
        ("image", "Check the pushed image by digest (attestations, plugins)"),
        ("image", "Log out of ghcr.io"),
        ("action", "Push release/v0.1.0 and move the major tag"),
    ]:
        assert steps[(job, step)] == "skipped", (job, step)
    assert not [e for e in entries if e.get("jobID") == "pypi" and "step" in e]  # not one step began

    plan = _output(entries, "plan")
    assert "release dry run (running under act)" in plan
    assert "release plan: version=0.1.0 dry_run=true" in plan

    # the wheel and the sdist reached the artifact step, and the wheel is this package
    built = sorted(p.name for p in (artifacts / "dist").iterdir())
    assert built == ["agentv_ci-0.1.0-py3-none-any.whl", "agentv_ci-0.1.0.tar.gz"]
    with zipfile.ZipFile(artifacts / "dist" / "agentv_ci-0.1.0-py3-none-any.whl") as wheel:
        names = wheel.namelist()
        metadata = wheel.read("agentv_ci-0.1.0.dist-info/METADATA").decode()
    assert "agentv_ci/__main__.py" in names and "agentv_ci/py.typed" in names
    assert "Name: agentv-ci\n" in metadata and "Version: 0.1.0\n" in metadata
    assert "PASSED" in _output(entries, "dist")  # twine check --strict

    assert "image plugins: reporter html, grader json-schema, grader text-stats" in _output(entries, "image")
    pinned = _output(entries, "action")
    assert "action.yml: image: docker://ghcr.io/octo/demo@sha256:" in pinned
    assert "Release v0.1.0: action.yml runs ghcr.io/octo/demo@sha256:" in pinned


def test_a_tag_that_is_not_the_package_version_stops_the_release(tmp_path: Path, runner_image: str) -> None:
    code, entries, artifacts = _act_release(tmp_path, runner_image, "v9.9.9")
    assert code != 0
    assert _job_results(entries).get("plan") == "failure"
    log = "\n".join(str(e.get("msg", "")) for e in entries)
    assert "tag v9.9.9 does not match pyproject.toml's version 0.1.0 (expected v0.1.0)" in log
    assert not any(s == "success" for (job, _), s in _step_results(entries).items() if job != "plan")
    assert not (artifacts / "dist").exists()
