"""`agentv-ci plugins`: every installed plugin, loaded and checked, with where it comes from."""

from __future__ import annotations

import msgspec

from agentv_ci import __version__
from agentv_ci.errors import ConfigError
from agentv_ci.plugins.checks import declared_api_version, is_builtin
from agentv_ci.plugins.config import config_style
from agentv_ci.plugins.contracts import NAMESPACES
from agentv_ci.plugins.registry import (
    PluginInfo,
    list_plugins,
    load_plugin_class,
    loaded_failure,
    reserved_name_problem,
)
from agentv_ci.plugins.versions import PLUGIN_API_VERSION

__all__ = ["PluginStatus", "PluginsReport", "plugins_report"]


class PluginStatus(msgspec.Struct, omit_defaults=False):
    """One entry point: what it is, where it comes from, and whether it loads."""

    kind: str
    name: str
    entry_point: str
    distribution: str | None
    version: str | None
    builtin: bool
    api_version: str | None = None  # declared by the class (built-ins: the core's)
    config: str | None = None  # "msgspec" | "json-schema" | None (reporters)
    error: str | None = None  # why it cannot be used; None when it loads and meets the contract


class PluginsReport(msgspec.Struct):
    """`agentv-ci plugins --json`."""

    agentv_ci: str
    plugin_api: str
    plugins: list[PluginStatus]

    @property
    def broken(self) -> list[PluginStatus]:
        return [p for p in self.plugins if p.error is not None]


def _status(info: PluginInfo) -> PluginStatus:
    status = PluginStatus(
        kind=info.kind,
        name=info.name,
        entry_point=info.entry_point,
        distribution=info.distribution,
        version=info.version,
        builtin=info.builtin,
    )
    reserved = reserved_name_problem(info)
    if reserved is not None:  # the name loads, but as the built-in: this entry point is never used
        status.error = reserved
        return status
    try:
        cls = load_plugin_class(info.namespace, info.name)
    except ConfigError as exc:
        failure = loaded_failure(info.namespace, info.name)
        status.error = failure.problem if failure is not None and not failure.claimants else exc.message
        return status
    if cls is None:  # pragma: no cover - listed a moment ago
        status.error = "no longer installed"
        return status
    status.builtin = status.builtin and is_builtin(cls)
    status.api_version = declared_api_version(cls)
    status.config = config_style(cls)
    return status


def plugins_report() -> PluginsReport:
    """Every grader, target and reporter entry point, each imported and checked."""

    statuses = [_status(info) for namespace in NAMESPACES.values() for info in list_plugins(namespace)]
    return PluginsReport(agentv_ci=__version__, plugin_api=PLUGIN_API_VERSION, plugins=statuses)


def render_plugins_text(report: PluginsReport) -> str:
    """One line per plugin, grouped by kind; a broken one says why on the next line."""
    lines = [f"agentv-ci {report.agentv_ci}, plugin API {report.plugin_api}"]
    width = max((len(p.name) for p in report.plugins), default=0)
    origin_width = max((len(_origin(p)) for p in report.plugins), default=0)
    for kind in NAMESPACES:
        group = [p for p in report.plugins if p.kind == kind]
        lines.append(f"{kind}s ({NAMESPACES[kind]}):")
        for p in group:
            state = "BROKEN" if p.error else f"api {p.api_version}"
            lines.append(f"  {p.name:<{width}}  {_origin(p):<{origin_width}}  {state:<8}  {p.entry_point}")
            if p.error:
                lines.append(f"      {p.error}")
        if not group:
            lines.append("  (none)")
    broken = len(report.broken)
    lines.append(
        f"{len(report.plugins)} plugin(s), {broken} broken" if broken else f"{len(report.plugins)} plugin(s)"
    )
    return "\n".join(lines)


def _origin(status: PluginStatus) -> str:
    if status.distribution is None:
        return "(unknown distribution)"
    return f"{status.distribution} {status.version or ''}".rstrip()
