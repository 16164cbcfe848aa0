"""Building grader instances from their specs (config converted by the plugin's own declaration)."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any

from agentv_ci.errors import ConfigError
from agentv_ci.model.suite import GraderSpec
from agentv_ci.plugins.config import convert_plugin_config
from agentv_ci.plugins.contracts import GRADERS_NAMESPACE, GraderPlugin
from agentv_ci.plugins.registry import load_plugin_class

__all__ = ["build_grader"]

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
    config = convert_plugin_config(
        cls,
        spec.config,
        what=f"{spec.type} grader {spec.name!r}",
        location=spec.location,
        key_locations=spec.config_locations,
    )
    grader: GraderPlugin = cls(spec, config, base_dir=base_dir)
    return grader
