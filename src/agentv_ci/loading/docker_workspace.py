"""`workspace.docker` (AgentV v4.42.4): `{image, timeout, memory, cpus}`, plus `network: none`
(agentv-ci), checked field by field with located errors. The code graders of a test with a docker
workspace run inside a fresh container (graders/code_in_docker.py)."""

from __future__ import annotations

import re
from typing import Any

from agentv_ci.loading.context import LoadContext, Node, type_name
from agentv_ci.model.bounds import within
from agentv_ci.model.workspace import DockerWorkspace, ImageRepo

DOCKER_KEYS = ("image", "timeout", "memory", "cpus", "network")
NETWORKS = ("none", "bridge")
MAX_TIMEOUT_S = 86_400
MIN_CPUS, MAX_CPUS = 0.1, 1024.0  # AgentV's schema minimum; more than any host has
MIN_MEMORY, MAX_MEMORY = 6 * 2**20, 2**40  # Docker's own minimum (6m); 1 TiB
# Docker's own size syntax (`512m`, `2g`, `1.5GB`, `1073741824`): go-units RAMInBytes.
_MEMORY = re.compile(r"^(\d+(?:\.\d+)?) ?([kmgtp]?)i?b?$", re.IGNORECASE)
_UNIT_POWER = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
# A reference Docker can resolve: [registry[:port]/]name[:tag][@digest]; never an option.
_IMAGE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@+-]*$")


def parse_image_repo(item: dict[str, Any], node: Node, ctx: LoadContext) -> ImageRepo | None:
    """A `repos` entry without `repo` in a block with `docker`: a repository inside the image,
    `path` as the container knows it (absolute, or relative to the image's working directory)."""
    path = item.get("path")
    ok = True
    if path is not None and (not isinstance(path, str) or not path.strip() or path.startswith("-")):
        ctx.error("E103", "repo path must be a path inside the image", node.child("path"))
        ok = False
    commit, base = item.get("commit"), item.get("base_commit")
    for key, value in (("commit", commit), ("base_commit", base)):
        if value is not None and (not isinstance(value, str) or not value or value.startswith("-")):
            ctx.error("E103", f"{key} must be a branch, tag or commit SHA", node.child(key))
            ok = False
    if isinstance(commit, str) and isinstance(base, str) and commit != base:
        ctx.error(
            "E113", "`commit` and `base_commit` differ (`base_commit` is an alias)", node.child("base_commit")
        )
        ok = False
    for key in ("ancestor", "sparse"):
        if key in item:
            ctx.warn(
                "W110",
                f"`{key}` of a repository inside the docker image is not run (AgentV ignores it too)",
                node.child(key),
                key=True,
            )
    ref = commit if isinstance(commit, str) else base if isinstance(base, str) else None
    return ImageRepo(path=path.strip() if isinstance(path, str) else None, commit=ref) if ok else None


def writes_docker(raw: Any) -> bool:
    """Whether a `workspace:` block as written (inline) has a `docker` block: its code graders may
    run scripts that only the image holds (not looked for on the host, no E301)."""
    return isinstance(raw, dict) and isinstance(raw.get("docker"), dict)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _memory_bytes(text: str) -> float | None:
    """The bytes a Docker size names (binary units, as go-units reads them); None when not a size."""
    match = _MEMORY.match(text)
    if match is None:
        return None
    return float(match.group(1)) * float(1024 ** _UNIT_POWER[match.group(2).lower()])


def parse_docker(raw: Any, node: Node, ctx: LoadContext) -> DockerWorkspace | None:
    """The container settings of `workspace.docker`; None (with errors recorded) when unusable."""
    if not isinstance(raw, dict):
        ctx.error("E101", f"workspace.docker must be a mapping, got {type_name(raw)}", node)
        return None
    ctx.check_keys(raw, node, DOCKER_KEYS, "workspace.docker")
    fields: dict[str, Any] = {}
    ok = True
    image = raw.get("image")
    if image is None:
        ctx.error("E102", "workspace.docker needs an `image`", node, hint="e.g. image: python:3.11-slim")
        ok = False
    elif not isinstance(image, str) or not _IMAGE.match(image.strip()):
        ctx.error(
            "E103",
            f"workspace.docker.image must be an image reference, got {image!r}",
            node.child("image"),
            hint="e.g. python:3.11-slim or ghcr.io/org/image@sha256:...",
        )
        ok = False
    else:
        fields["image"] = image.strip()
    timeout = raw.get("timeout")
    if timeout is not None:
        # the range first: int() of NaN or an infinity raises
        if not _number(timeout) or not within(timeout, 1, MAX_TIMEOUT_S) or timeout != int(timeout):
            ctx.error(
                "E110",
                f"workspace.docker.timeout must be a whole number of seconds in 1..{MAX_TIMEOUT_S}",
                node.child("timeout"),
                hint="AgentV's default is 1800",
            )
            ok = False
        else:
            fields["timeout"] = int(timeout)
    memory = raw.get("memory")
    if memory is not None:
        size: float | None = None  # bytes; a number is bytes (not float(): a 400-digit int overflows)
        if _number(memory):
            size = memory
        elif isinstance(memory, str):
            size = _memory_bytes(memory.strip())
        if size is None:
            ctx.error(
                "E103",
                f"workspace.docker.memory must be a size such as 512m or 2g, got {memory!r}",
                node.child("memory"),
            )
            ok = False
        elif not within(size, MIN_MEMORY, MAX_MEMORY) or (_number(memory) and size != int(size)):
            ctx.error(
                "E110",
                f"workspace.docker.memory must be from 6m to 1t (Docker's minimum; 1 TiB), got {memory!r}",
                node.child("memory"),
            )
            ok = False
        else:
            text = str(int(size)) if _number(memory) else str(memory)  # a number: bytes
            fields["memory"] = text.strip().replace(" ", "")
    cpus = raw.get("cpus")
    if cpus is not None:
        if not _number(cpus) or not within(cpus, MIN_CPUS, MAX_CPUS):
            ctx.error(
                "E110",
                f"workspace.docker.cpus must be a number from {MIN_CPUS} to {MAX_CPUS:.0f} (e.g. 0.5 or 2), "
                f"got {cpus!r}",
                node.child("cpus"),
            )
            ok = False
        else:
            fields["cpus"] = float(cpus)
    network = raw.get("network")
    if network is not None:
        if network not in NETWORKS:
            ctx.error(
                "E103",
                f"workspace.docker.network must be one of {', '.join(NETWORKS)}, got {network!r}",
                node.child("network"),
                hint="`none`: the grader gets no network at all",
            )
            ok = False
        else:
            fields["network"] = network
    return DockerWorkspace(**fields) if ok else None
