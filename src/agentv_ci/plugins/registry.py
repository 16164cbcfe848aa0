"""Finding and loading plugins: entry points (importlib.metadata), stevedore, the load-time check.

Entry points are listed without importing anything; a plugin is imported only when something asks
for its name, so a broken plugin never disturbs a run that does not use it. When one is used, it
fails once per process, with one message naming its entry point, distribution and version and what
is wrong; later requests get the same `ConfigError`. Two distributions registering one name is an
error for that name only, naming both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn

from agentv_ci.errors import ConfigError
from agentv_ci.plugins.checks import contract_problem
from agentv_ci.plugins.contracts import KINDS

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

__all__ = [
    "PluginFailure",
    "PluginInfo",
    "list_plugins",
    "load_plugin_class",
    "register_for_tests",
]


@dataclass(frozen=True)
class PluginInfo:
    """One registered entry point, known without importing it."""

    namespace: str
    name: str
    entry_point: str  # "module:attr"
    distribution: str | None = None
    version: str | None = None

    @property
    def kind(self) -> str:
        return KINDS[self.namespace]

    @property
    def origin(self) -> str:
        """`name version` of the distribution, for messages."""
        if self.distribution is None:
            return "an unknown distribution"
        return f"{self.distribution} {self.version}" if self.version else self.distribution


@dataclass(frozen=True)
class PluginFailure:
    """Why a plugin name cannot be used: a broken plugin, or several distributions claiming it."""

    info: PluginInfo
    problem: str
    claimants: tuple[PluginInfo, ...] = field(default=())

    def render(self) -> str:
        info = self.info
        if self.claimants:
            named = [f"{c.origin} (entry point {c.entry_point})" for c in self.claimants]
            count = "two" if len(named) == 2 else str(len(named))
            listed = ", ".join(named[:-1]) + " and " + named[-1]
            return f"{info.kind} plugin name {info.name!r} is claimed by {count} distributions: {listed}"
        return (
            f"{info.kind} plugin {info.name!r} from {info.origin} (entry point {info.entry_point}) "
            f"failed to load: {self.problem}"
        )

    @property
    def hint(self) -> str:
        if self.claimants:
            namespace = self.info.namespace
            return f"uninstall all but one of them: a name in {namespace} must come from one distribution"
        return "`agentv-ci plugins --check` lists every broken plugin"

    def error(self) -> ConfigError:
        return ConfigError(self.render(), hint=self.hint)


_ENTRY_POINTS: dict[str, dict[str, list[PluginInfo]]] = {}
_CLASSES: dict[tuple[str, str], type[Any]] = {}
_FAILURES: dict[tuple[str, str], PluginFailure] = {}


def _registered(namespace: str) -> dict[str, list[PluginInfo]]:
    """Every entry point of `namespace` by name (read once per process)."""
    found = _ENTRY_POINTS.get(namespace)
    if found is None:
        from importlib.metadata import entry_points

        found = {}
        origins: dict[int, tuple[str, str]] = {}
        for ep in entry_points(group=namespace):
            found.setdefault(ep.name, []).append(_info(namespace, ep, origins))
        _ENTRY_POINTS[namespace] = found
    return found


def _info(namespace: str, ep: EntryPoint, origins: dict[int, tuple[str, str]]) -> PluginInfo:
    dist = ep.dist
    if dist is None:
        return PluginInfo(namespace, ep.name, ep.value)
    # `name` and `version` each parse the distribution's METADATA file: read once per distribution
    # (its entry points share one object), not twice per entry point.
    origin = origins.get(id(dist))
    if origin is None:
        origin = origins[id(dist)] = (dist.name, dist.version)
    return PluginInfo(namespace, ep.name, ep.value, *origin)


def list_plugins(namespace: str) -> list[PluginInfo]:
    """Every entry point in `namespace`, by name, without importing any of them."""
    infos = (i for group in _registered(namespace).values() for i in group)
    return sorted(infos, key=lambda i: (i.name, i.distribution or ""))


def _core_version() -> str:
    from agentv_ci import __version__

    return __version__


def load_plugin_class(namespace: str, name: str) -> type[Any] | None:
    """The class registered as `name` in `namespace`, or None when nothing is registered.

    Raises `ConfigError` naming the plugin when it is registered but broken or claimed twice.
    """
    key = (namespace, name)
    if key in _CLASSES:
        return _CLASSES[key]
    if key in _FAILURES:
        raise _FAILURES[key].error()
    infos = _registered(namespace).get(name, [])
    if not infos:
        return None
    if len({i.distribution for i in infos}) > 1:
        claimants = tuple(sorted(infos, key=lambda i: i.origin))
        _fail(key, PluginFailure(infos[0], "claimed twice", claimants))
    info = infos[0]
    from stevedore import NamedExtensionManager

    load_failures: list[BaseException] = []
    # Only the named entry point is imported; an import error is collected, never raised from here.
    manager: Any = NamedExtensionManager(
        namespace,
        names=[name],
        invoke_on_load=False,
        on_load_failure_callback=lambda _mgr, _ep, exc: load_failures.append(exc),
        on_missing_entrypoints_callback=None,
    )
    if load_failures:
        exc = load_failures[0]
        _fail(key, PluginFailure(info, f"{type(exc).__name__}: {exc}"))
    extensions = list(manager.extensions)
    if not extensions:  # listed by importlib.metadata, unseen by stevedore (a stale entry-point cache)
        _fail(key, PluginFailure(info, "stevedore does not see it: delete ~/.cache/python-entrypoints"))
    cls = extensions[0].plugin
    problem = contract_problem(namespace, cls, core_version=_core_version())
    if problem is not None:
        _fail(key, PluginFailure(info, problem))
    _CLASSES[key] = cls
    return cls  # type: ignore[no-any-return]


def _fail(key: tuple[str, str], failure: PluginFailure) -> NoReturn:
    _FAILURES[key] = failure
    raise failure.error()


def loaded_failure(namespace: str, name: str) -> PluginFailure | None:
    """The failure recorded for `name`, after `load_plugin_class` raised for it."""
    return _FAILURES.get((namespace, name))


def register_for_tests(namespace: str, name: str, cls: type[Any]) -> None:
    """Register a class directly (tests and embedding); it wins over entry points.

    The class is checked as an installed plugin would be: `ConfigError` when it breaks the contract.
    """
    problem = contract_problem(namespace, cls, core_version=_core_version())
    if problem:
        raise ConfigError(f"{KINDS[namespace]} plugin {name!r} breaks the plugin contract: {problem}")
    _CLASSES[(namespace, name)] = cls
    _FAILURES.pop((namespace, name), None)
