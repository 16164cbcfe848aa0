"""Plugins: the contracts (`contracts`), the API version (`versions`), the load-time check
(`checks`), config conversion (`config`), discovery and loading (`registry`), grader builds
(`building`), the listing (`status`) and the package scaffold (`scaffold`).

Plugin authors import from `agentv_ci.api`, the public contract; the core imports from here.
"""

from __future__ import annotations

from agentv_ci.plugins.building import build_grader
from agentv_ci.plugins.config import convert_config, convert_plugin_config
from agentv_ci.plugins.contracts import (
    GRADERS_NAMESPACE,
    KINDS,
    NAMESPACES,
    REPORTERS_NAMESPACE,
    TARGETS_NAMESPACE,
    GraderPlugin,
    GraderTargetCaller,
    GraderTargetRequest,
    GradingContext,
    PluginKind,
    ReporterPlugin,
    ReportOptions,
    TargetPlugin,
    TargetRequest,
)
from agentv_ci.plugins.registry import (
    PluginFailure,
    PluginInfo,
    list_plugins,
    load_plugin_class,
    register_for_tests,
)
from agentv_ci.plugins.versions import PLUGIN_API_VERSION

__all__ = [
    "GRADERS_NAMESPACE",
    "KINDS",
    "NAMESPACES",
    "PLUGIN_API_VERSION",
    "REPORTERS_NAMESPACE",
    "TARGETS_NAMESPACE",
    "GraderPlugin",
    "GraderTargetCaller",
    "GraderTargetRequest",
    "GradingContext",
    "PluginFailure",
    "PluginInfo",
    "PluginKind",
    "ReportOptions",
    "ReporterPlugin",
    "TargetPlugin",
    "TargetRequest",
    "build_grader",
    "convert_config",
    "convert_plugin_config",
    "list_plugins",
    "load_plugin_class",
    "register_for_tests",
]
