"""A test's workspace (AgentV's `workspace:` block) after loading: what the runner materialises.

Paths are absolute (resolved by the loader against the file the workspace is written in); only the
fields the runner acts on are kept, so a key the loader accepts either lands here or is reported.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from agentv_ci.model.source import SourceLocation

HOOK_NAMES = ("before_all", "before_each", "after_each", "after_all")
SETUP_HOOKS = frozenset({"before_all", "before_each"})

# Closed sets the loader checks (E103) before it builds a spec (loading/workspace.py).
WorkspaceReset = Literal["none", "fast", "strict"]
WorkspaceIsolation = Literal["shared", "per_test"]
WorkspaceMode = Literal["pooled", "temp", "static"]


class WorkspaceHook(msgspec.Struct, frozen=True, omit_defaults=True):
    """One lifecycle hook: a `command` (argv list, or a string run by `sh -c`) and/or a `reset`."""

    command: list[str] | str | None = None
    reset: WorkspaceReset | None = None
    cwd: str | None = None  # absolute; None = the workspace file's directory, else the eval file's
    timeout_ms: int | None = None
    env: dict[str, str] = {}


class TargetHooks(msgspec.Struct, frozen=True, omit_defaults=True):
    """A matrix target's runner-specific setup (`execution.targets: [{name, use_target, hooks}]`).

    The hooks run in the test's workspace around the workspace's own (AgentV v4.42.4): setup is
    workspace `before_all`, target `before_all`; per test, workspace `before_each`, target
    `before_each`; teardown per test target `after_each`, workspace `after_each`; then target
    `after_all`, workspace `after_all`. `use_target` makes the entry's name an alias of another
    target (when no targets file declares that name)."""

    hooks: dict[str, WorkspaceHook] = {}
    use_target: str | None = None
    use_target_location: SourceLocation | None = None  # where `use_target` was written

    def hook(self, name: str) -> WorkspaceHook | None:
        return self.hooks.get(name)


class WorkspaceRepo(msgspec.Struct, frozen=True, omit_defaults=True):
    """A git repository cloned into the workspace at `path` and checked out at `commit`."""

    path: str  # relative to the workspace root
    repo: str  # clone URL (a `file://` URL, an https/ssh URL; `org/name` = GitHub)
    commit: str | None = None  # branch, tag or SHA (`base_commit` is its alias); None = HEAD
    ancestor: int = 0
    sparse: list[str] = []


class DockerWorkspace(msgspec.Struct, frozen=True, omit_defaults=True):
    """`workspace.docker` (AgentV v4.42.4): code graders run inside a fresh container of `image`.

    `timeout` (seconds, AgentV's default 1800) bounds the grader's run in the container; `memory`
    (`512m`, `2g`) and `cpus` (`0.5`, `2`) become `docker create --memory/--cpus`; `network: none`
    (agentv-ci) cuts the container off every network."""

    image: str
    timeout: int = 1800
    memory: str | None = None
    cpus: float | None = None
    network: str | None = None  # "none" (agentv-ci); None = Docker's default network


class ImageRepo(msgspec.Struct, frozen=True, omit_defaults=True):
    """A `repos` entry without `repo` in a docker workspace (AgentV v4.42.4): a repository already in
    the image (SWE-bench's `/testbed`), reset to `commit` in each grader's container before the
    grader runs. `path` None: the image's working directory."""

    path: str | None = None
    commit: str | None = None  # `commit` or `base_commit`; None: left as the image has it


class WorkspaceSpec(msgspec.Struct, frozen=True, omit_defaults=True):
    """A workspace: template copy + repos + hooks, shared by a suite's tests or fresh per test."""

    template: str | None = None  # absolute directory
    repos: list[WorkspaceRepo] = []
    hooks: dict[str, WorkspaceHook] = {}
    hooks_enabled: bool = True
    isolation: WorkspaceIsolation = "shared"
    mode: WorkspaceMode | None = None  # None: pooled when there are repos
    path: str | None = None  # the directory of `mode: static` (absolute)
    env: dict[str, str] = {}  # variables for the hooks (agentv-ci extension)
    required_commands: list[str] = []  # `env.required_commands` preflight (AgentV)
    required_python_modules: list[str] = []  # `env.required_python_modules` preflight (AgentV)
    base_dir: str | None = None  # the external workspace file's directory (hooks' default cwd)
    # agentv-ci: resets may restore a static `path` that lies in a git work tree (running/snapshots.py)
    allow_reset_of_worktree: bool = False
    docker: DockerWorkspace | None = None  # code graders run in a container (graders/code_in_docker.py)
    image_repos: list[ImageRepo] = []  # `repos` entries without `repo`: in the docker image

    def hook(self, name: str) -> WorkspaceHook | None:
        """The hook `name` when hooks are enabled."""
        return self.hooks.get(name) if self.hooks_enabled else None

    @property
    def resets(self) -> bool:
        """Whether `before_each`/`after_each` ever reset the workspace."""
        return any(
            (hook := self.hook(name)) is not None and hook.reset not in (None, "none")
            for name in ("before_each", "after_each")
        )
