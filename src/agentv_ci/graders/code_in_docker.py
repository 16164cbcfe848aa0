"""A code grader run inside its test's docker workspace (AgentV v4.42.4 `workspace.docker`).

Per grader run, as AgentV: the image is looked up (pulled only when missing), a fresh container is
created with the workspace's limits and started, the grader runs in it with `docker exec -i` (its
argv as written, no shell added) and the AgentV stdin payload, its answer is read by the same
protocol as on the host (graders/code_protocol.py), and the container is removed (`docker rm -f`)
whatever happened: a grade, an error, a timeout, a Ctrl-C.

What goes into the container (agentv-ci; AgentV copies nothing): the files the command runs from the
repository (its script, the in-repo modules it imports, other files it names) and the test's
workspace, each at the same absolute path as on the host, so relative paths, `workspace_path` and
`AGENTV_WORKSPACE_PATH` mean the same inside. A grader that runs such a file (or sets `cwd`) starts
in its usual working directory; one that runs only what the image holds (inline code, `/testbed`
scripts) starts in the image's working directory, as in AgentV.
Nothing else of the host: no other file, no environment variable (no secret), and with
`network: none` no network. The target proxy (`target:`) listens on the host and is not offered.
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentv_ci.graders.code_process import ScriptRun
from agentv_ci.graders.code_protocol import script_stdin
from agentv_ci.graders.docker_container import Container, ensure_image
from agentv_ci.loading.command_paths import command_files
from agentv_ci.model.result import DependencyResult, TargetResponse
from agentv_ci.model.suite import Test
from agentv_ci.model.workspace import DockerWorkspace, ImageRepo

__all__ = ["repository_root", "run_in_container"]


def repository_root(start: Path) -> Path:
    """The git work tree holding `start` (the eval file's directory), else `start` itself."""
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return start


def _archive(files: list[Path], directories: list[Path], workdir: Path | None) -> bytes:
    """A tar of `files` and `directories` (recursively) at their absolute paths, plus `workdir`."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        made = [workdir] if workdir is not None else []
        for directory in (*made, *(d for d in directories if d != workdir)):
            info = tarfile.TarInfo(str(directory).lstrip("/"))
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(info)
        for directory in directories:
            tar.add(directory, arcname=str(directory).lstrip("/"), recursive=True)
        for path in files:
            tar.add(path, arcname=str(path).lstrip("/"), recursive=False)
    return buffer.getvalue()


def _command_files(argv: list[str], cwd: Path, repo_root: Path) -> list[Path]:
    found = command_files(argv, cwd, repo_root)
    return [path for path in found.files if path.is_file()]


async def run_in_container(
    argv: list[str],
    docker: DockerWorkspace,
    test: Test,
    response: TargetResponse,
    *,
    config: dict[str, Any],
    workspace_path: Path | None,
    cwd: Path,
    repo_root: Path,
    timeout_s: float,
    explicit_cwd: bool = False,
    image_repos: list[ImageRepo] | None = None,
    dependencies: Mapping[str, DependencyResult] | None = None,
) -> ScriptRun:
    """The grader's run in a fresh container (removed before this returns or raises). It starts in
    `cwd` when the command runs a file of the repository or the grader sets `cwd` (`explicit_cwd`),
    else in the image's working directory, as AgentV. The repositories inside the image
    (`image_repos`) are first reset to their commits. Raises `ScriptFailure` (timeout, runaway
    output) or `ContainerFailure` (docker itself failed)."""
    await ensure_image(docker.image, float(docker.timeout))
    with script_stdin(
        test,
        response,
        config=config,
        workspace_path=workspace_path,
        dependencies=dependencies,
        spill_prefix="agentv-ci-docker-",
        indent=2,
    ) as (payload, stdin):
        files = _command_files(argv, cwd, repo_root)
        workdir = str(cwd) if files or explicit_cwd else None
        if "output_path" in payload:
            files.append(Path(payload["output_path"]))
        directories = [workspace_path] if workspace_path is not None and workspace_path.is_dir() else []
        archive = _archive(files, directories, cwd if workdir is not None else None)
        env = {"AGENTV_WORKSPACE_PATH": str(workspace_path)} if workspace_path else {}
        container = await Container.start(docker, test_id=test.id)
        try:
            await container.copy_tar(archive)
            for repo in image_repos or []:
                await container.reset_checkout(repo, float(docker.timeout))
            return await container.execute(argv, stdin=stdin, workdir=workdir, env=env, timeout_s=timeout_s)
        finally:
            container.remove()
