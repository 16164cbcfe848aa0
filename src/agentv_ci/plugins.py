"""Plugin contracts and loading (stevedore entry points).

Three namespaces; built-ins register through the same entry points as third-party packages:

- `agentv_ci.graders`   name = grader `type` (kebab-case) -> a `GraderPlugin` class
- `agentv_ci.targets`   name = target `provider`          -> a `TargetPlugin` class
- `agentv_ci.reporters` name = report format               -> a `ReporterPlugin` class

Each grader/target class declares a msgspec `Config` Struct; the core converts the raw config
into it (errors mapped back to file:line:col) and passes the instance to the constructor.
A plugin that fails to import or breaks its contract is reported by name, entry point and
distribution, and never crashes unrelated runs.
"""

from __future__ import annotations

import inspect
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, NoReturn, Protocol, runtime_checkable

import msgspec

from agentv_ci.errors import ConfigError
from agentv_ci.model.result import GraderResult, RunSummary, TargetResponse
from agentv_ci.model.source import SourceLocation
from agentv_ci.model.suite import GraderSpec, Message, Test

GRADERS_NAMESPACE = "agentv_ci.graders"
TARGETS_NAMESPACE = "agentv_ci.targets"
REPORTERS_NAMESPACE = "agentv_ci.reporters"


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


@runtime_checkable
class GraderPlugin(Protocol):
    """A grader. Built from its spec and converted config; `grade` returns a `GraderResult`.

    Contract: `Config` is a msgspec Struct class (fields = the grader's own YAML keys);
    `__init__(spec, config, *, base_dir)`; `async grade(ctx) -> GraderResult`. A grader that cannot
    score (crash, timeout, unparseable judge) returns a result with `error` set and verdict "fail"
    or raises `GraderError`; it never returns a made-up score.

    Optional: `inline: ClassVar[bool] = True` declares a grader that only computes (no I/O, never
    really suspends), so the engine may await it in turn instead of giving it its own task.
    """

    Config: ClassVar[type[msgspec.Struct]]

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
    """A target (model API, agent CLI, recorded answers).

    Contract: `Config` is a msgspec Struct class; `__init__(name, config, *, base_dir)`;
    `async invoke(request) -> TargetResponse`; `async aclose()` releases connections.
    Failures raise `TargetError` (the runner records an execution error and goes on).
    """

    Config: ClassVar[type[msgspec.Struct]]

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
    """A reporter: a pure function of a `RunSummary` that writes one file."""

    def write(self, summary: RunSummary, options: ReportOptions) -> None: ...


# --------------------------------------------------------------------------- loading


@dataclass(frozen=True)
class PluginFailure:
    namespace: str
    name: str
    entry_point: str
    distribution: str
    problem: str

    def render(self) -> str:
        return (
            f"plugin {self.name!r} ({self.namespace}, entry point {self.entry_point}, "
            f"from {self.distribution}) failed to load: {self.problem}"
        )


@dataclass(frozen=True)
class PluginInfo:
    namespace: str
    name: str
    entry_point: str
    distribution: str


_CLASS_CACHE: dict[tuple[str, str], type[Any]] = {}
_FAILURES: dict[tuple[str, str], PluginFailure] = {}


def _distribution_of(entry_point: Any) -> str:
    dist = getattr(entry_point, "dist", None)
    if dist is None:
        return "unknown distribution"
    return f"{dist.name} {dist.version}"


def list_plugins(namespace: str) -> list[PluginInfo]:
    """Every entry point in `namespace` without importing any of them."""
    from importlib.metadata import entry_points

    found = [
        PluginInfo(namespace, ep.name, ep.value, _distribution_of(ep)) for ep in entry_points(group=namespace)
    ]
    return sorted(found, key=lambda p: p.name)


def _check_contract(namespace: str, cls: Any) -> str | None:
    required: dict[str, tuple[str, ...]] = {
        GRADERS_NAMESPACE: ("Config", "grade"),
        TARGETS_NAMESPACE: ("Config", "invoke", "aclose"),
        REPORTERS_NAMESPACE: ("write",),
    }
    if not inspect.isclass(cls):
        return f"expected a class, got {type(cls).__name__}"
    missing = [attr for attr in required[namespace] if not hasattr(cls, attr)]
    if missing:
        return "missing " + ", ".join(missing)
    config_cls = getattr(cls, "Config", None)
    if "Config" in required[namespace] and not (
        inspect.isclass(config_cls) and issubclass(config_cls, msgspec.Struct)
    ):
        return "`Config` must be a msgspec.Struct subclass"
    for method in ("grade", "invoke"):
        if method in required[namespace] and not inspect.iscoroutinefunction(getattr(cls, method)):
            return f"`{method}` must be `async def`"
    return None


def load_plugin_class(namespace: str, name: str) -> type[Any] | None:
    """The class registered as `name` in `namespace`, or None when nothing is registered.

    Raises `ConfigError` naming the plugin when it is registered but broken.
    """
    key = (namespace, name)
    if key in _CLASS_CACHE:
        return _CLASS_CACHE[key]
    if key in _FAILURES:
        raise ConfigError(_FAILURES[key].render())
    from stevedore import NamedExtensionManager

    load_failures: list[tuple[Any, BaseException]] = []
    # Only the named entry point is imported; a broken one is reported, never raised from here.
    manager: Any = NamedExtensionManager(
        namespace,
        names=[name],
        invoke_on_load=False,
        on_load_failure_callback=lambda _mgr, ep, exc: load_failures.append((ep, exc)),
        on_missing_entrypoints_callback=None,
    )
    if load_failures:
        ep, exc = load_failures[0]
        _fail(key, ep, f"{type(exc).__name__}: {exc}")
    extensions = list(manager.extensions)
    if not extensions:
        return None
    extension = extensions[0]
    cls = extension.plugin
    contract_problem = _check_contract(namespace, cls)
    if contract_problem is not None:
        _fail(key, extension.entry_point, f"breaks the plugin contract: {contract_problem}")
    _CLASS_CACHE[key] = cls
    return cls  # type: ignore[no-any-return]


def _fail(key: tuple[str, str], entry_point: Any, problem: str) -> NoReturn:
    namespace, name = key
    value = getattr(entry_point, "value", str(entry_point))
    failure = PluginFailure(namespace, name, value, _distribution_for(namespace, name, entry_point), problem)
    _FAILURES[key] = failure
    raise ConfigError(failure.render())


def _distribution_for(namespace: str, name: str, entry_point: Any) -> str:
    # stevedore's cached entry points carry no distribution; importlib.metadata's do.
    if getattr(entry_point, "dist", None) is not None:
        return _distribution_of(entry_point)
    from importlib.metadata import entry_points

    for candidate in entry_points(group=namespace, name=name):
        return _distribution_of(candidate)
    return "unknown distribution"


def register_for_tests(namespace: str, name: str, cls: type[Any]) -> None:
    """Register a class directly (tests and embedding); it wins over entry points."""
    problem = _check_contract(namespace, cls)
    if problem:
        raise ConfigError(f"plugin {name!r} breaks the plugin contract: {problem}")
    _CLASS_CACHE[(namespace, name)] = cls


def convert_config(
    config_cls: type[msgspec.Struct],
    raw: dict[str, Any],
    *,
    what: str,
    location: SourceLocation | None,
    key_locations: dict[str, SourceLocation] | None = None,
) -> Any:
    """Convert raw YAML config into a plugin's Config struct; errors point at the offending key."""
    try:
        return msgspec.convert(raw, config_cls, strict=False)
    except msgspec.ValidationError as exc:
        message = str(exc)
        loc = location
        if " - at `$." in message and key_locations:
            first_key = message.rsplit(" - at `$.", 1)[1].rstrip("`").split(".")[0].split("[")[0]
            loc = key_locations.get(first_key, location)
        raise ConfigError(f"invalid {what}: {message}", location=loc) from None


# Built graders, reused while their spec lives: suite-level graders are shared by every test, and
# converting their config per answer dominated grading time. Each entry keeps its spec alive so the
# id() key cannot be reused by another object.
_GRADER_CACHE: OrderedDict[tuple[int, str], tuple[GraderSpec, GraderPlugin]] = OrderedDict()
_GRADER_CACHE_SIZE = 4096


def build_grader(spec: GraderSpec, *, base_dir: Path) -> GraderPlugin:
    """The grader plugin for `spec` (raises ConfigError for unknown types / bad config).

    An instance may be reused for many answers, concurrently: graders keep no per-answer state.
    """
    key = (id(spec), str(base_dir))
    cached = _GRADER_CACHE.get(key)
    if cached is not None and cached[0] is spec:
        _GRADER_CACHE.move_to_end(key)
        return cached[1]
    grader = _build_grader(spec, base_dir=base_dir)
    _GRADER_CACHE[key] = (spec, grader)
    if len(_GRADER_CACHE) > _GRADER_CACHE_SIZE:
        _GRADER_CACHE.popitem(last=False)
    return grader


def _build_grader(spec: GraderSpec, *, base_dir: Path) -> GraderPlugin:
    cls: Any = load_plugin_class(GRADERS_NAMESPACE, spec.type)
    if cls is None:
        raise ConfigError(f"unknown grader type {spec.type!r}", location=spec.location)
    config = convert_config(
        cls.Config,
        spec.config,
        what=f"{spec.type} grader {spec.name!r}",
        location=spec.location,
        key_locations=spec.config_locations,
    )
    grader: GraderPlugin = cls(spec, config, base_dir=base_dir)
    return grader
