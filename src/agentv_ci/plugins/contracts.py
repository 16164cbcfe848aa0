"""The plugin contracts: what a grader, a target and a reporter class provide and receive.

Three entry-point namespaces; built-ins register through them exactly as third-party packages do:

- `agentv_ci.graders`   name = grader `type` (kebab-case) -> a `GraderPlugin` class
- `agentv_ci.targets`   name = target `provider`          -> a `TargetPlugin` class
- `agentv_ci.reporters` name = report format               -> a `ReporterPlugin` class

Every class is checked when it loads (`agentv_ci.plugins.checks`); plugin authors import these names
from `agentv_ci.api`, never from here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from agentv_ci.model.result import DependencyResult, GraderResult, RunSummary, TargetResponse
from agentv_ci.model.suite import GraderSpec, Message, Test

GRADERS_NAMESPACE = "agentv_ci.graders"
TARGETS_NAMESPACE = "agentv_ci.targets"
REPORTERS_NAMESPACE = "agentv_ci.reporters"

PluginKind = Literal["grader", "target", "reporter"]
NAMESPACES: dict[PluginKind, str] = {
    "grader": GRADERS_NAMESPACE,
    "target": TARGETS_NAMESPACE,
    "reporter": REPORTERS_NAMESPACE,
}
KINDS: dict[str, PluginKind] = {namespace: kind for kind, namespace in NAMESPACES.items()}


# --------------------------------------------------------------------------- graders


@dataclass(frozen=True)
class GraderTargetRequest:
    """What an llm-grader (or a code-grader's proxy) asks its grader model."""

    messages: list[Message]
    system: str | None = None
    target: str | None = None  # a named grader target, else the default grader target
    temperature: float | None = None


GraderTargetCaller = Callable[[GraderTargetRequest], Awaitable[TargetResponse]]


@dataclass
class GradingContext:
    """Everything a grader may read about one answer to one test."""

    test: Test
    response: TargetResponse
    threshold: float
    eval_path: Path
    target: str = ""
    call_grader_target: GraderTargetCaller | None = None
    workspace_path: Path | None = None
    dry_run: bool = False
    attempt: int = 0
    extras: dict[str, Any] = field(default_factory=dict)
    # The test's finished dependencies by id (`depends_on`; AgentV's `dependencyResults`), else None.
    dependency_results: dict[str, DependencyResult] | None = None


@runtime_checkable
class GraderPlugin(Protocol):
    """A grader: built once from its spec and converted config, then `grade`d for many answers.

    Contract (checked when the class loads):

    - `api_version: ClassVar[str]`, the plugin API it is written for (`PLUGIN_API_VERSION`, "1.0");
    - its config: `Config`, a msgspec Struct class (fields = the grader's own YAML keys), or
      `config_schema`, a JSON Schema (a dict) the keys are validated against; the constructor then
      receives the validated dict;
    - `__init__(spec, config, *, base_dir)`: `base_dir` is the eval file's directory; raise
      `ConfigError` for a configuration the schema cannot express;
    - `async grade(ctx) -> GraderResult`. A grader that cannot score (crash, timeout, unparseable
      judge) returns a result with `error` set or raises `GraderError`; never a made-up score.

    Instances are shared by every answer graded with the same spec, concurrently: keep no
    per-answer state. Optional: `inline: ClassVar[bool] = True` declares a grader that only
    computes (no I/O, never really suspends), so the engine may await it in turn.
    """

    def __init__(self, spec: GraderSpec, config: Any, *, base_dir: Path) -> None: ...

    async def grade(self, ctx: GradingContext) -> GraderResult: ...


# --------------------------------------------------------------------------- targets


@dataclass
class TargetRequest:
    """One call to a target: a test's input, rendered, for one attempt."""

    test: Test
    messages: list[Message]
    prompt: str  # the rendered question text (see agentv_ci.prompting)
    eval_path: Path
    attempt: int = 0
    timeout_s: float | None = None
    workspace_path: Path | None = None
    files: list[str] = field(default_factory=list)  # absolute paths of attached files


@runtime_checkable
class TargetPlugin(Protocol):
    """A target (model API, agent CLI, recorded answers), named by its `provider` in targets.yaml.

    Contract (checked when the class loads): `api_version`; `Config` (msgspec Struct) or
    `config_schema` (JSON Schema) for the provider's own keys in targets.yaml;
    `__init__(name, config, *, base_dir)` where `base_dir` is the project directory holding
    `.agentv/`; `async invoke(request) -> TargetResponse`; `async aclose()` releases connections.
    Failures raise `TargetError` (the runner records an execution error and goes on).
    """

    def __init__(self, name: str, config: Any, *, base_dir: Path) -> None: ...

    async def invoke(self, request: TargetRequest) -> TargetResponse: ...

    async def aclose(self) -> None: ...


# --------------------------------------------------------------------------- reporters


@dataclass
class ReportOptions:
    """Where and how a reporter writes."""

    path: Path
    repo_root: Path = field(default_factory=Path.cwd)
    baseline: RunSummary | None = None
    extras: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class ReporterPlugin(Protocol):
    """A reporter: a pure function of a `RunSummary` that writes one file.

    Contract (checked when the class loads): `api_version`; a constructor without arguments;
    `write(summary, options) -> None` (a plain function, not `async`). `options.path` is the file to
    write; `options.extras` may carry `decision` (the gate outcome) and `selection`.
    """

    def write(self, summary: RunSummary, options: ReportOptions) -> None: ...
