"""One throwaway Docker container for one grader run, driven through the `docker` CLI (argv, no
shell): the image is looked up locally and pulled only when missing; the container is created with
the workspace's limits (`--memory`, `--cpus`, `--network none`) and labelled, started with a
`sleep infinity` that keeps it up, filled with `docker cp` from a tar stream, and the grader runs
in it with `docker exec -i`. `remove` (`docker rm -f`) is synchronous so that it also runs in a
`finally` reached by cancellation (Ctrl-C) or a timeout; containers still alive at exit (a second
Ctrl-C) are removed by an `atexit` handler."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import shutil
import subprocess
from pathlib import Path

from agentv_ci.graders.code_process import ScriptFailure, ScriptRun, run_script
from agentv_ci.model.workspace import DockerWorkspace, ImageRepo
from agentv_ci.security.child_env import child_environment

LABEL = "agentv-ci.grader"  # every container agentv-ci creates carries it (`docker ps -a --filter label=...`)
TEST_LABEL = "agentv-ci.test"
PID_LABEL = "agentv-ci.pid"
_QUICK_S = 60.0  # create, start, cp, inspect
_REMOVE_S = 30.0
# What the docker CLI itself needs to find its engine; the grader in the container gets none of it.
_DOCKER_VARIABLES = (
    "DOCKER_HOST",
    "DOCKER_CONTEXT",
    "DOCKER_CONFIG",
    "DOCKER_CERT_PATH",
    "DOCKER_TLS_VERIFY",
    "DOCKER_API_VERSION",
)
_EXEC_FAILURES = (125, 126, 127)  # docker exec: engine error, cannot invoke, not found
_live: set[str] = set()
_images: set[str] = set()
_engine_checked = False
_image_lock: asyncio.Lock | None = None


class ContainerFailure(Exception):
    """A docker command failed (no engine, missing image, create or copy failed)."""


async def _docker(args: list[str], *, timeout_s: float = _QUICK_S, stdin: bytes = b"") -> ScriptRun:
    try:
        return await run_script(
            ["docker", *args], stdin=stdin, cwd=Path("/"), timeout_s=timeout_s, env=_docker_env_extra()
        )
    except ScriptFailure as exc:
        raise ContainerFailure(f"docker {args[0]}: {exc}") from None


def _docker_env_extra() -> dict[str, str]:
    return {k: os.environ[k] for k in _DOCKER_VARIABLES if k in os.environ}


def _failed(what: str, run: ScriptRun) -> ContainerFailure:
    reason = run.stderr.strip() or run.stdout.strip() or f"exit {run.exit_code}"
    return ContainerFailure(f"{what} failed (exit {run.exit_code}): {reason[-500:]}")


async def _check_engine() -> None:
    """The docker CLI is installed and its engine answers (asked once per run, as AgentV)."""
    if shutil.which("docker") is None:
        raise ContainerFailure(
            "a docker workspace needs the docker CLI, which is not installed here "
            "(docs/graders.md, code-grader in a docker workspace)"
        )
    version = await _docker(["version", "--format", "{{.Server.Version}}"], timeout_s=_QUICK_S)
    if version.exit_code != 0:
        raise _failed("Docker is not available: docker version", version)


async def ensure_image(image: str, timeout_s: float) -> None:
    """The engine answers and the image is there locally (then nothing is pulled), or `docker pull`
    fetches it."""
    global _image_lock, _engine_checked
    if image in _images:
        return
    if _image_lock is None:
        _image_lock = asyncio.Lock()
    async with _image_lock:
        if image in _images:
            return
        if not _engine_checked:
            await _check_engine()
            _engine_checked = True
        found = await _docker(["image", "inspect", "--format", "{{.Id}}", "--", image])
        if found.exit_code != 0:
            pulled = await _docker(["pull", "--", image], timeout_s=timeout_s)
            if pulled.exit_code != 0:
                raise _failed(f"docker pull {image}", pulled)
        _images.add(image)


def create_arguments(docker: DockerWorkspace, *, test_id: str) -> list[str]:
    """`docker create` argv (after `docker`): labels, limits, a kept-alive `sleep infinity`."""
    args = ["create", "--label", f"{LABEL}=1", "--label", f"{PID_LABEL}={os.getpid()}"]
    args += ["--label", f"{TEST_LABEL}={test_id}"]
    if docker.memory is not None:
        args.append(f"--memory={docker.memory}")
    if docker.cpus is not None:
        args.append(f"--cpus={docker.cpus:g}")
    if docker.network is not None:
        args.append(f"--network={docker.network}")
    return [*args, "--entrypoint", "sleep", "--", docker.image, "infinity"]


class Container:
    """A created and started container; `remove()` it in a `finally`."""

    def __init__(self, container_id: str) -> None:
        self.id = container_id

    @classmethod
    async def start(cls, docker: DockerWorkspace, *, test_id: str) -> Container:
        created = await _docker(create_arguments(docker, test_id=test_id))
        if created.exit_code != 0 or not created.stdout.strip():
            raise _failed("docker create", created)
        container = cls(created.stdout.strip().splitlines()[-1])
        _live.add(container.id)
        try:
            started = await _docker(["start", container.id])
            if started.exit_code != 0:
                raise _failed("docker start", started)
        except BaseException:
            container.remove()
            raise
        return container

    async def copy_tar(self, archive: bytes) -> None:
        """Unpack a tar archive (absolute paths stored without their leading `/`) at `/`."""
        copied = await _docker(["cp", "-", f"{self.id}:/"], stdin=archive)
        if copied.exit_code != 0:
            raise _failed("docker cp", copied)

    async def execute(
        self, argv: list[str], *, stdin: bytes, workdir: str | None, env: dict[str, str], timeout_s: float
    ) -> ScriptRun:
        """`docker exec -i` the grader. Raises ScriptFailure on a timeout (the caller removes the
        container, which ends whatever still runs in it) and ContainerFailure when docker could not
        run the command at all (exit 125, 126, 127: an engine error, a program that is missing or
        not executable in the image), as a missing program is an error on the host too. `workdir`
        None: the image's own working directory."""
        args = ["docker", "exec", "-i", *(["-w", workdir] if workdir is not None else [])]
        for name, value in env.items():
            args += ["-e", f"{name}={value}"]
        run = await run_script(
            [*args, self.id, *argv], stdin=stdin, cwd=Path("/"), timeout_s=timeout_s, env=_docker_env_extra()
        )
        if run.exit_code in _EXEC_FAILURES and not run.stdout.lstrip().startswith(("{", "[")):
            raise _failed(f"docker exec {argv[0]!r} in {self.id[:12]}", run)
        return run

    async def reset_checkout(self, repo: ImageRepo, timeout_s: float) -> None:
        """`git reset --hard <commit>` of a repository inside the image, then HEAD verified to be
        that commit (AgentV v4.42.4 `resetContainerCheckout`)."""
        if repo.commit is None:
            return
        where = ["-C", repo.path] if repo.path is not None else []
        git = ["docker", "exec", self.id, "git", *where]
        steps = (
            (["reset", "--hard", "--quiet", repo.commit, "--"], timeout_s),
            (["rev-parse", "--verify", "--quiet", "--end-of-options", f"{repo.commit}^{{commit}}"], _QUICK_S),
            (["rev-parse", "HEAD"], _QUICK_S),
        )
        shown = repo.path or "the image's working directory"
        outputs: list[str] = []
        for args, limit in steps:
            try:
                run = await run_script(
                    [*git, *args], stdin=b"", cwd=Path("/"), timeout_s=limit, env=_docker_env_extra()
                )
            except ScriptFailure as exc:
                raise ContainerFailure(f"git {args[0]} of {shown} in the container: {exc}") from None
            if run.exit_code != 0:
                raise _failed(f"git {args[0]} {repo.commit} of {shown} in the container", run)
            outputs.append(run.stdout.strip())
        if outputs[1] != outputs[2]:
            raise ContainerFailure(
                f"{shown} in the container is at {outputs[2]}, not {repo.commit} ({outputs[1]})"
            )

    def remove(self) -> None:
        """`docker rm -f`, synchronous: runs to its end even in a cancelled task."""
        _remove(self.id)


def _remove(container_id: str) -> None:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(
            ["docker", "rm", "-f", "--", container_id],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=_REMOVE_S,
            env=child_environment(_docker_env_extra()),
            check=False,
        )
    _live.discard(container_id)


@atexit.register
def _remove_leftovers() -> None:
    for container_id in list(_live):
        _remove(container_id)
