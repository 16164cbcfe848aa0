"""Finding and loading plugins: entry points (read by plugins/installed.py as importlib.metadata reads
them, or by importlib.metadata where it must), stevedore (third-party plugins; built-ins are imported
directly), the load-time check.

Entry points are listed without importing anything; a plugin is imported only when something asks
for its name, so a broken plugin never disturbs a run that does not use it. When one is used, it
fails once per process, with one message naming its entry point, distribution and version and what
is wrong; later requests get the same `ConfigError`. Two distributions registering one name is an
error for that name only, naming both.

Built-in names are reserved: a third-party entry point that registers one (a grader `contains`, a
target `openai`, a reporter `junit`) never takes it. The built-in keeps working; the claimant is
reported as broken in `agentv-ci plugins` and in one warning on stderr per process.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

from agentv_ci import __version__
from agentv_ci.errors import ConfigError
from agentv_ci.plugins.checks import contract_problem
from agentv_ci.plugins.contracts import KINDS
from agentv_ci.plugins.installed import InstalledEntryPoint, installed_entry_points, load_entry_point

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint, EntryPoints

__all__ = [
    "CORE_DISTRIBUTION",
    "PluginFailure",
    "PluginInfo",
    "describe_plugin",
    "fault_text",
    "list_plugins",
    "load_plugin_class",
    "plugin_origin",
    "read_installed_again",
    "register_for_tests",
    "reserved_name_problem",
]

CORE_DISTRIBUTION = "agentv-ci"


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
    def builtin(self) -> bool:
        """Registered by agentv-ci itself."""
        return self.distribution == CORE_DISTRIBUTION and self.entry_point.startswith("agentv_ci.")

    @property
    def described(self) -> str:
        """`grader plugin 'x' from dist 1.0 (entry point mod:Class)`, for messages."""
        return f"{self.kind} plugin {self.name!r} from {self.origin} (entry point {self.entry_point})"

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
_ORIGINS: dict[type[Any], PluginInfo] = {}
# (name, version) by distribution object: the cached entry points keep each one alive, so an id is
# never reused; every plugin kind's entry points share them.
_DISTRIBUTIONS: dict[int, tuple[str, str]] = {}


class _AllEntryPoints(Protocol):
    """What `importlib.metadata.entry_points()` returns (SelectableGroups on 3.11, EntryPoints later)."""

    def select(self, *, group: str) -> EntryPoints: ...


@functools.cache
def _all_entry_points() -> _AllEntryPoints:
    """Every installed entry point, read once per process: `entry_points(group=...)` reads every
    distribution's entry_points.txt for each group it is asked, and a run asks for two or three."""
    # lazy: importlib.metadata (entry points) loaded only where plugins/installed.py cannot read them
    from importlib.metadata import entry_points

    return entry_points()


@functools.cache
def _installed() -> dict[str, list[InstalledEntryPoint]] | None:
    """The plugin kinds' entry points as plugins/installed.py reads them (once per process), or None
    where importlib.metadata has to."""
    return installed_entry_points()


def read_installed_again() -> None:
    """After pip installed packages into this process's environment (action/extra_packages.py): the
    plugin kinds not listed yet are read from the installed entry points anew, as they were before
    the entry points were read once for all kinds (the kinds already listed stay as they were)."""
    _all_entry_points.cache_clear()
    _installed.cache_clear()
    _DISTRIBUTIONS.clear()  # keyed by id(): the distribution objects just dropped may be reused


def _registered(namespace: str) -> dict[str, list[PluginInfo]]:
    """Every entry point of `namespace` by name (read once per process)."""
    found = _ENTRY_POINTS.get(namespace)
    if found is None:
        found = {}
        installed = _installed()
        if installed is not None:
            for point in installed.get(namespace, []):
                found.setdefault(point.name, []).append(
                    PluginInfo(namespace, point.name, point.value, *(point.distribution or ()))
                )
        else:
            for ep in _all_entry_points().select(group=namespace):
                found.setdefault(ep.name, []).append(_info(namespace, ep))
        _ENTRY_POINTS[namespace] = found
        _warn_reserved(found)
    return found


def reserved_name_problem(info: PluginInfo) -> str | None:
    """Why `info` is not used: it registers the name of a built-in (None when it does not)."""
    if info.builtin:
        return None
    same_name = _registered(info.namespace).get(info.name, [])
    if not any(other.builtin for other in same_name):
        return None
    return (
        f"{info.name!r} is the name of a built-in {info.kind}, and built-in names are reserved: "
        f"this entry point is ignored and the built-in is used (rename the plugin)"
    )


def _warn_reserved(found: dict[str, list[PluginInfo]]) -> None:
    """One warning per claimant of a built-in name, from the main process only (worker processes
    read the entry points too)."""
    claimants = [
        i for infos in found.values() if any(b.builtin for b in infos) for i in infos if not i.builtin
    ]
    if not claimants:
        return
    import multiprocessing  # only now: ~2 ms that nearly every process would spend for nothing

    if multiprocessing.parent_process() is not None:
        return
    for info in claimants:
        print(
            f"warning: {info.described} is broken: {info.name!r} is the name of a built-in "
            f"{info.kind}, and built-in names are reserved; the built-in is used",
            file=sys.stderr,
        )


def _info(namespace: str, ep: EntryPoint) -> PluginInfo:
    dist = ep.dist
    if dist is None:
        return PluginInfo(namespace, ep.name, ep.value)
    # `name` and `version` would each parse the distribution's METADATA file: it is parsed once per
    # distribution and process (its entry points, of every kind, share one object).
    origin = _DISTRIBUTIONS.get(id(dist))
    if origin is None:
        metadata = dist.metadata
        origin = _DISTRIBUTIONS[id(dist)] = (metadata["Name"], metadata["Version"])
    return PluginInfo(namespace, ep.name, ep.value, *origin)


def list_plugins(namespace: str) -> list[PluginInfo]:
    """Every entry point in `namespace`, by name, without importing any of them."""
    infos = (i for group in _registered(namespace).values() for i in group)
    return sorted(infos, key=lambda i: (i.name, i.distribution or ""))


def _core_version() -> str:

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
    builtins = [i for i in infos if i.builtin]
    if builtins and len(infos) > 1:
        # A reserved name: only the built-in's own entry point is imported, never the claimant's.
        info = builtins[0]
        cls = _load_one(key, info)
    else:
        if len({i.distribution for i in infos}) > 1:
            claimants = tuple(sorted(infos, key=lambda i: i.origin))
            _fail(key, PluginFailure(infos[0], "claimed twice", claimants))
        info = infos[0]
        # A built-in is our own module: imported directly, as stevedore would (which first reads every
        # distribution's entry points once more: ~1 ms a name, and ~1.5 ms to import it).
        cls = _load_one(key, info) if info.builtin else _load_named(key, info)
    problem = contract_problem(namespace, cls, core_version=_core_version())
    if problem is not None:
        _fail(key, PluginFailure(info, problem))
    _CLASSES[key] = cls
    _ORIGINS.setdefault(cls, info)
    return cls  # type: ignore[no-any-return]


def _load_named(key: tuple[str, str], info: PluginInfo) -> Any:
    """The class of the one entry point registered as `key`, through stevedore."""
    # lazy: stevedore loaded only when `_load_named` runs
    from stevedore import NamedExtensionManager

    namespace, name = key
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
    return extensions[0].plugin


def _load_one(key: tuple[str, str], info: PluginInfo) -> Any:
    """The class of exactly the entry point `info` (others registered under its name are not imported)."""
    try:
        return load_entry_point(info.entry_point)
    except Exception as exc:
        _fail(key, PluginFailure(info, f"{type(exc).__name__}: {exc}"))


def plugin_origin(cls: type[Any]) -> PluginInfo | None:
    """The entry point `cls` was loaded from (None for a class registered directly)."""
    return _ORIGINS.get(cls)


def describe_plugin(kind: str, cls: type[Any]) -> str:
    """`target plugin 'x' from dist 1.0 (entry point mod:Class)` for a loaded plugin class, or
    `target plugin class mod.Class` for one registered directly."""
    info = _ORIGINS.get(cls)
    return info.described if info is not None else f"{kind} plugin class {cls.__module__}.{cls.__qualname__}"


def fault_text(exc: BaseException) -> str:
    """`TypeName: first line of the message` (capped), for a plugin's exception in one line."""
    text = str(exc).strip()
    first = text.splitlines()[0][:300] if text else ""
    return type(exc).__name__ + (f": {first}" if first else "")


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
