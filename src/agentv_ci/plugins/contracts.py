"""The plugin contracts: what a grader, a target and a reporter class provide and receive.

Three entry-point namespaces; built-ins register through them exactly as third-party packages do:

- `agentv_ci.graders`   name = grader `type` (kebab-case) -> a `GraderPlugin` class
- `agentv_ci.targets`   name = target `provider`          -> a `TargetPlugin` class
- `agentv_ci.reporters` name = report format               -> a `ReporterPlugin` class

Every class is checked when it loads (`agentv_ci.plugins.checks`); plugin authors import these names
from `agentv_ci.api`, never from here.
"""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from agentv_ci.model.result import DependencyResult, GraderResult, RunSummary, TargetResponse
from agentv_ci.model.suite import GraderSpec, Message, Test

if TYPE_CHECKING:  # gating sits above plugins (docs/architecture.md): the type is for annotations only
    from agentv_ci.gating import GateDecision

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


@dataclass(frozen=True, init=False)
class ReportOptions:
    """Where a reporter writes, and what the run decided (frozen: every reporter sees the same).

    - `path`: the file to write; `repo_root`: what paths in the report are relative to;
    - `baseline`: the run the deltas are measured against, if any;
    - `decision`: the gate outcome (a `GateDecision`: `passed`, `exit_code`, `reasons`,
      `comparison`, `waived`); None when the caller gated nothing (built-ins then apply default gates);
    - `selection`: eval path -> why change-based selection ran it; None means `summary.selection`;
    - `sarif_category`: the run's SARIF `automationDetails.id`, if one was given.

    Plugin API 1.1; `extras` is the 1.0 view of the same values (deprecated).
    """

    path: Path
    repo_root: Path
    baseline: RunSummary | None
    decision: GateDecision | None
    selection: Mapping[str, str] | None
    sarif_category: str | None

    def __init__(
        self,
        path: Path,
        repo_root: Path | None = None,
        baseline: RunSummary | None = None,
        *,
        decision: GateDecision | None = None,
        selection: Mapping[str, str] | None = None,
        sarif_category: str | None = None,
        extras: Mapping[str, Any] | None = None,
    ) -> None:
        if extras:  # API 1.0 callers (plugins' own tests) passed these in a dict
            unknown = sorted(set(extras) - _LEGACY_EXTRAS)
            if unknown:
                raise TypeError(f"ReportOptions: unknown extras {unknown} (known: {sorted(_LEGACY_EXTRAS)})")
            warnings.warn(_EXTRAS_DEPRECATED, DeprecationWarning, stacklevel=2)
            decision = extras.get("decision", decision)
            selection = extras.get("selection", selection)
            sarif_category = extras.get("sarif_category", sarif_category)
        for name, value in (
            ("path", path),
            ("repo_root", repo_root if repo_root is not None else Path.cwd()),
            ("baseline", baseline),
            ("decision", decision),
            ("selection", MappingProxyType(dict(selection)) if selection is not None else None),
            ("sarif_category", sarif_category),
        ):
            object.__setattr__(self, name, value)

    @property
    def extras(self) -> Mapping[str, Any]:
        """Deprecated (plugin API 1.0): `decision`, `selection` and `sarif_category` as a read-only
        mapping holding the keys 1.0 reporters received. Read the fields instead."""
        warnings.warn(_EXTRAS_DEPRECATED, DeprecationWarning, stacklevel=2)
        view: dict[str, Any] = {"decision": self.decision}
        if self.selection is not None:
            view["selection"] = self.selection
        if self.sarif_category:
            view["sarif_category"] = self.sarif_category
        return MappingProxyType(view)


_LEGACY_EXTRAS = frozenset({"decision", "selection", "sarif_category"})
_EXTRAS_DEPRECATED = (
    "ReportOptions.extras is deprecated since plugin API 1.1: read options.decision, options.selection "
    "and options.sarif_category"
)


@runtime_checkable
class ReporterPlugin(Protocol):
    """A reporter: a pure function of a `RunSummary` that writes one file.

    Contract (checked when the class loads): `api_version`; a constructor without arguments;
    `write(summary, options) -> None` (a plain function, not `async`). `options.path` is the file to
    write; `options.decision` is the gate outcome, `options.selection` why each eval ran.
    """

    def write(self, summary: RunSummary, options: ReportOptions) -> None: ...
