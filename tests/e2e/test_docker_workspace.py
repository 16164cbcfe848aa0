"""Docker workspaces end to end (issue 22): `agentv-ci run` on a real Docker engine with the local
`python:3.11-slim` image (built by `../shared/tools/container-base.sh`; no registry is reachable).

The code grader can only pass inside the container (it looks for Docker's `/.dockerenv` and the
image's Python 3.11 at /usr/local/bin), reads the limits the container got from its cgroup, sees no
network but loopback, no host file it was not given and no host secret. Every container carries the
label `agentv-ci.test=<test id>`, so each test can check that none is left afterwards: after a
grade, a grader timeout and a Ctrl-C. Where Docker cannot start, the tests skip and say why."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentv_ci.graders.code_in_docker import run_in_container
from agentv_ci.graders.code_process import ScriptFailure
from agentv_ci.model.result import TargetResponse
from agentv_ci.model.suite import Test as SuiteTest
from agentv_ci.model.workspace import DockerWorkspace
from tests.cli_helpers import run_cli
from tests.git_repos import git

BASE = "python:3.11-slim"
# BASE plus a marker file, built here. Tagged per process: the module removes it when done, and
# another pytest worker or session may be running this module at the same time.
IMAGE = f"agentv-ci-test/docker-workspace:marker-{os.getpid()}"
SECRET = "sk-docker-secret-0123456789"
MIRROR = Path("/work/.mirror/EntityProcess+agentv/repo")
EXAMPLE = "examples/features/docker-workspace/evals/docker-example.EVAL.yaml"


def _docker_problem() -> str | None:
    if shutil.which("docker") is None:
        return "docker is not installed (run ../shared/tools/container-base.sh)"
    info = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=30)
    if info.returncode != 0:
        return "the Docker engine is not running (run ../shared/tools/container-base.sh)"
    found = subprocess.run(["docker", "image", "inspect", BASE], capture_output=True, timeout=30)
    if found.returncode != 0:
        return f"the base image {BASE} is missing (run ../shared/tools/container-base.sh)"
    return None


_PROBLEM = _docker_problem()
pytestmark = pytest.mark.skipif(_PROBLEM is not None, reason=_PROBLEM or "")


@pytest.fixture(scope="module", autouse=True)
def marker_image(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A local image (no registry): BASE with a file that exists nowhere else."""
    context = tmp_path_factory.mktemp("image")
    (context / "marker").write_text("in the image\n")
    (context / "run_tests.py").write_text("print('image tests passed')\n")
    (context / "Dockerfile").write_text(
        f"FROM {BASE}\nCOPY marker /agentv-ci-test-marker\n"
        "COPY run_tests.py /testbed/run_tests.py\nWORKDIR /testbed\n"
    )
    subprocess.run(
        ["docker", "build", "-q", "-t", IMAGE, str(context)], check=True, capture_output=True, timeout=300
    )
    yield IMAGE
    subprocess.run(["docker", "image", "rm", "-f", IMAGE], capture_output=True, timeout=60)


AGENT = "import json, sys\njson.dump({'text': 'patched'}, open(sys.argv[2], 'w'))\n"

# Passes only inside the container: a marker file only the test image has, and the container's own
# first process (the `sleep infinity` agentv-ci starts it with).
CHECK = """\
import json, os, socket, sys, time
payload = json.load(sys.stdin)
def read(*paths):
    for path in paths:
        try:
            return open(path).read().strip()
        except OSError:
            pass
    return None
inside = read("/agentv-ci-test-marker") == "in the image" and read("/proc/1/cmdline") == "sleep\\0infinity\\0"
time.sleep(float(payload["config"].get("sleep", 0)))
print(json.dumps({
    "score": 1.0 if inside else 0.0,
    "assertions": [{"text": "runs in the test image's container", "passed": inside}],
    "details": {
        "container": socket.gethostname(),
        "memory": read("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"),
        "cpu": read("/sys/fs/cgroup/cpu.max", "/sys/fs/cgroup/cpu/cpu.cfs_quota_us"),
        "networks": sorted(os.listdir("/sys/class/net")),
        "host_file_seen": os.path.exists(os.path.join(os.getcwd(), "host-only.txt")),
        "secret_seen": any("sk-docker-secret" in v for v in os.environ.values()),
        "cwd": os.getcwd(),
        "answer": payload["output"],
        "workspace_file": read(os.path.join(os.environ.get("AGENTV_WORKSPACE_PATH", "/none"), "seed.txt")),
    },
}))
"""


def _project(tmp_path: Path, test_id: str, *, docker: str, sleep: float = 0) -> Path:
    project = tmp_path / "project"
    (project / "tpl").mkdir(parents=True)
    (project / ".git").mkdir()
    (project / "tpl" / "seed.txt").write_text("seeded\n")
    (project / "agent.py").write_text(AGENT)
    (project / "check.py").write_text(CHECK)
    (project / "host-only.txt").write_text("a host file the grader was not given\n")
    (project / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: cli\n"
        f"    command: {sys.executable} {project / 'agent.py'} {{PROMPT_FILE}} {{OUTPUT_FILE}}\n"
    )
    (project / "d.eval.yaml").write_text(
        "name: d\n"
        f"workspace:\n  template: ./tpl\n{docker}"
        f"tests:\n  - id: {test_id}\n    input: fix it\n    assertions:\n"
        f"      - type: code-grader\n        command: [python3, check.py]\n        sleep: {sleep}\n"
    )
    return project


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTV_CI_"))}
    env.update(
        XDG_CACHE_HOME=str(tmp_path / "cache"), OPENAI_API_KEY=SECRET, AGENTV_CI_PASS_ENV="OPENAI_API_KEY"
    )
    return env


def _containers(test_id: str) -> list[str]:
    listed = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=agentv-ci.test={test_id}"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return listed.stdout.split()


def _row(out: Path) -> dict[str, Any]:
    rows = [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines() if line.strip()]
    assert len(rows) == 1, rows
    return rows[0]


def _unique() -> str:
    return f"t-{uuid.uuid4().hex[:12]}"


def test_grader_runs_in_the_container_with_its_limits_and_the_container_is_removed(tmp_path: Path) -> None:
    test_id = _unique()
    limits = "    timeout: 60\n    memory: 256m\n    cpus: 0.5\n    network: none\n"
    docker = f"  docker:\n    image: {IMAGE}\n{limits}"
    project = _project(tmp_path, test_id, docker=docker)
    done = run_cli("run", "d.eval.yaml", "-o", "out", "-q", cwd=project, env=_env(tmp_path), timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    row = _row(project / "out")
    grader = row["scores"][0]
    assert grader["score"] == 1.0 and grader["assertions"][0]["passed"] is True
    details = grader["details"]
    assert details["memory"] in (str(256 * 1024 * 1024), "268435456")  # cgroup v1 and v2 spell it alike
    assert details["cpu"] in ("50000", "50000 100000")  # 0.5 of a 100 ms period
    assert details["networks"] == ["lo"]  # network: none
    assert details["answer"] == "patched"  # the AgentV payload on stdin
    assert details["cwd"] == str(project)  # its usual working directory, with the script copied in
    assert details["workspace_file"] == "seeded"  # the test's workspace, at the same path
    assert details["host_file_seen"] is False  # nothing of the host it was not given
    assert details["secret_seen"] is False  # no environment from the host, even a passed secret
    assert _containers(test_id) == []
    gone = subprocess.run(["docker", "inspect", details["container"]], capture_output=True, timeout=30)
    assert gone.returncode != 0  # the very container it ran in no longer exists

    # The same grader on the host fails: it can only pass inside the container.
    host = _project(tmp_path / "host", test_id, docker="")
    done = run_cli("run", "d.eval.yaml", "-o", "out", "-q", cwd=host, env=_env(tmp_path), timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert _row(host / "out")["scores"][0]["score"] == 0.0


def test_a_grader_past_the_timeout_is_an_execution_error_and_its_container_is_removed(tmp_path: Path) -> None:
    test_id = _unique()
    project = _project(
        tmp_path, test_id, docker=f"  docker:\n    image: {IMAGE}\n    timeout: 2\n", sleep=120
    )
    started = time.monotonic()
    done = run_cli("run", "d.eval.yaml", "-o", "out", "-q", cwd=project, env=_env(tmp_path), timeout=120)
    assert time.monotonic() - started < 60
    assert done.returncode == 3, done.stdout + done.stderr  # inconclusive, never a pass or a plain fail
    row = _row(project / "out")
    assert row["execution_status"] == "execution_error"
    assert "timed out after 2" in row["error"], row["error"]
    assert _containers(test_id) == []


def test_ctrl_c_while_the_grader_runs_removes_the_container(tmp_path: Path) -> None:
    test_id = _unique()
    project = _project(
        tmp_path, test_id, docker=f"  docker:\n    image: {IMAGE}\n    timeout: 300\n", sleep=300
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "agentv_ci", "run", "d.eval.yaml", "-o", "out", "-q"],
        cwd=project,
        env=_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not _containers(test_id):
            time.sleep(0.2)
        assert _containers(test_id), "the grader's container never started"
        time.sleep(1.0)  # the grader is running in it
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, stderr
    assert _containers(test_id) == []


def test_a_grader_of_the_image_alone_starts_in_the_images_workdir(tmp_path: Path) -> None:
    """AgentV's way: a command that runs nothing of the repository (a SWE-bench image's own test
    runner) starts in the image's WORKDIR and reads paths relative to it."""
    test_id = _unique()
    project = _project(tmp_path, test_id, docker=f"  docker:\n    image: {IMAGE}\n")
    text = (project / "d.eval.yaml").read_text()
    (project / "d.eval.yaml").write_text(text.replace("[python3, check.py]", "[python3, run_tests.py]"))
    done = run_cli("run", "d.eval.yaml", "-o", "out", "-q", cwd=project, env=_env(tmp_path), timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    grader = _row(project / "out")["scores"][0]
    assert grader["assertions"] == [{"text": "image tests passed", "passed": True}]
    assert _containers(test_id) == []


def test_without_the_docker_cli_the_grader_is_an_execution_error(tmp_path: Path) -> None:
    test_id = _unique()
    project = _project(tmp_path, test_id, docker=f"  docker:\n    image: {IMAGE}\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for program in ("git", "python3"):
        found = shutil.which(program)
        assert found is not None
        (bin_dir / program).symlink_to(found)
    env = {**_env(tmp_path), "PATH": str(bin_dir)}
    done = run_cli("run", "d.eval.yaml", "-o", "out", "-q", cwd=project, env=env, timeout=120)
    assert done.returncode == 3, done.stdout + done.stderr
    row = _row(project / "out")
    assert row["execution_status"] == "execution_error"
    assert "needs the docker CLI, which is not installed here" in row["error"], row["error"]


def test_agentvs_docker_example_runs(tmp_path: Path) -> None:
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
    (tmp_path / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: dry-run\n    provider: mock\n    response: \"def f(): return 'hello world'\"\n"
    )
    (tmp_path / "docker-example.EVAL.yaml").write_text(text)
    done = run_cli(
        "run", "docker-example.EVAL.yaml", "-o", "out", "-q", cwd=tmp_path, env=_env(tmp_path), timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    grader = _row(tmp_path / "out")["scores"][0]
    assert grader["assertions"] == [{"text": "grader ran in container", "passed": True}]
    assert _containers("hello-world") == []


# In-process: the container is gone as soon as the grader's run ends, not only when the process
# exits (the `atexit` fallback would hide a missing `finally` from the CLI tests above).


def _in_process(tmp_path: Path, test_id: str, sleep: float, timeout_s: float) -> Any:
    (tmp_path / "check.py").write_text(CHECK)
    return run_in_container(
        ["python3", "check.py"],
        DockerWorkspace(image=IMAGE, timeout=60),
        SuiteTest(id=test_id),
        TargetResponse(text="x"),
        config={"sleep": sleep},
        workspace_path=None,
        cwd=tmp_path,
        repo_root=tmp_path,
        timeout_s=timeout_s,
    )


def test_the_container_is_removed_when_the_run_times_out(tmp_path: Path) -> None:
    test_id = _unique()

    async def main() -> str:
        with pytest.raises(ScriptFailure, match="timed out after 1"):
            await _in_process(tmp_path, test_id, sleep=60, timeout_s=1)
        return " ".join(_containers(test_id))

    assert asyncio.run(main()) == ""


def test_the_container_is_removed_when_the_run_is_cancelled(tmp_path: Path) -> None:
    test_id = _unique()

    async def main() -> tuple[bool, str]:
        task = asyncio.ensure_future(_in_process(tmp_path, test_id, sleep=60, timeout_s=60))
        deadline = time.monotonic() + 30
        while not _containers(test_id) and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        started = bool(_containers(test_id))
        await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return started, " ".join(_containers(test_id))

    assert asyncio.run(main()) == (True, "")


@pytest.fixture(scope="module")
def testbed_image(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """An image holding a git repository at /testbed (HEAD at its second commit): (image, first SHA)."""
    context = tmp_path_factory.mktemp("testbed")
    repo = context / "testbed"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README").write_text("v1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    first = git(repo, "rev-parse", "HEAD")
    (repo / "README").write_text("v2\n")
    git(repo, "commit", "-qam", "two")
    base = "local/act-runner:bookworm"  # has git; built by container-base.sh as well
    if subprocess.run(["docker", "image", "inspect", base], capture_output=True, timeout=30).returncode:
        pytest.skip(f"the image {base} is missing (run ../shared/tools/container-base.sh)")
    (context / "Dockerfile").write_text(
        f"FROM {base}\nCOPY testbed /testbed\n"
        "RUN git config --system --add safe.directory '*'\nWORKDIR /testbed\n"
    )
    image = f"agentv-ci-test/docker-workspace:testbed-{os.getpid()}"  # per process, as IMAGE
    subprocess.run(
        ["docker", "build", "-q", "-t", image, str(context)], check=True, capture_output=True, timeout=300
    )
    yield image, first
    subprocess.run(["docker", "image", "rm", "-f", image], capture_output=True, timeout=60)


README_IS_V1 = (
    "import sys; text = open('README').read().strip(); print(text); sys.exit(0 if text == 'v1' else 1)"
)


@pytest.mark.parametrize("known", [True, False])
def test_a_repository_inside_the_image_is_reset_to_its_base_commit(
    tmp_path: Path, testbed_image: tuple[str, str], known: bool
) -> None:
    """AgentV's SWE-bench shape: a `repos` entry without `repo` is a repository the image holds; each
    grader's container resets it to `base_commit` first (an unknown commit: execution error)."""
    image, first = testbed_image
    test_id = _unique()
    commit = first if known else "f" * 40
    project = tmp_path / "project"
    project.mkdir()
    (project / ".git").mkdir()
    (project / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: mock\n    response: ok\n"
    )
    (project / "d.eval.yaml").write_text(
        f"workspace:\n  docker:\n    image: {image}\n"
        f"  repos:\n    - path: /testbed\n      base_commit: {commit}\n"
        f"tests:\n  - id: {test_id}\n    input: fix it\n    assertions:\n"
        f"      - type: code-grader\n        command: [python3, -c, {json.dumps(README_IS_V1)}]\n"
    )
    done = run_cli("run", "d.eval.yaml", "-o", "out", "-q", cwd=project, env=_env(tmp_path), timeout=120)
    row = _row(project / "out")
    if known:
        assert done.returncode == 0, done.stdout + done.stderr
        assert row["scores"][0]["assertions"] == [{"text": "v1", "passed": True}]
    else:
        assert done.returncode == 3, done.stdout + done.stderr
        assert row["execution_status"] == "execution_error"
        assert "git reset" in row["error"] and "/testbed" in row["error"], row["error"]
    assert _containers(test_id) == []
