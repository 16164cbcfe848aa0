"""Building grader instances from their specs (config converted by the plugin's own declaration).

Built graders are reused: by spec (a suite-level grader is one spec shared by every test) and, for
the built-in pure graders, by content (the same `contains` written in 10,000 tests is built once).
A grader keeps no per-answer state, so one instance grades any number of answers.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any

import msgspec

from agentv_ci.errors import ConfigError
from agentv_ci.model.suite import GraderSpec
from agentv_ci.plugins.config import convert_plugin_config
from agentv_ci.plugins.contracts import GRADERS_NAMESPACE, GraderPlugin
from agentv_ci.plugins.registry import load_plugin_class

__all__ = ["build_grader"]

# Built graders, reused while their spec lives: suite-level graders are shared by every test, and
# converting their config per answer dominated grading time. Each entry keeps its spec alive so the
# id() key cannot be reused by another object. Oldest entries go first when it is full.
# Keyed on the id alone, the directory checked after: hashing and comparing a Path per answer cost
# more than the rest of the lookup (the loader's directory is an equal Path, not the same object).
_GRADER_CACHE: OrderedDict[int, tuple[GraderSpec, Path, GraderPlugin]] = OrderedDict()
_GRADER_CACHE_SIZE = 4096
# Built-in pure graders by content (type, name, weight, required, bar, negation, config, directory):
# equal specs written in many tests build one instance. Only for graders that read their spec's
# locations when they are built, never when they grade (the built-in `inline` ones), and only
# successful builds: a build error is raised from each spec, with that spec's location.
_BY_CONTENT: OrderedDict[tuple[Any, ...], GraderPlugin] = OrderedDict()
_BY_CONTENT_SIZE = 4096
_ENCODE = msgspec.msgpack.Encoder(order="deterministic")


def build_grader(spec: GraderSpec, *, base_dir: Path) -> GraderPlugin:
    """The grader plugin for `spec` (raises ConfigError for unknown types / bad config).

    An instance may be reused for many answers, concurrently: graders keep no per-answer state.
    """
    key = id(spec)
    cached = _GRADER_CACHE.get(key)
    if cached is not None and cached[0] is spec:
        if cached[1] is base_dir:
            return cached[2]
        if cached[1] == base_dir:  # an equal directory: keep this one, found by identity next time
            _GRADER_CACHE[key] = (spec, base_dir, cached[2])
            return cached[2]
    content = _content_key(spec, base_dir)
    grader = _BY_CONTENT.get(content) if content is not None else None
    if grader is None:
        grader = _build_grader(spec, base_dir=base_dir)
        if content is not None:
            if len(_BY_CONTENT) >= _BY_CONTENT_SIZE:
                _BY_CONTENT.popitem(last=False)
            _BY_CONTENT[content] = grader
    if key not in _GRADER_CACHE and len(_GRADER_CACHE) >= _GRADER_CACHE_SIZE:
        _GRADER_CACHE.popitem(last=False)
    _GRADER_CACHE[key] = (spec, base_dir, grader)
    return grader


def _content_key(spec: GraderSpec, base_dir: Path) -> tuple[Any, ...] | None:
    """What a built-in pure grader is built from, when the spec's type is one; else None."""
    try:
        cls = load_plugin_class(GRADERS_NAMESPACE, spec.type)
    except ConfigError:
        return None
    if cls is None or not getattr(cls, "inline", False) or not cls.__module__.startswith(_BUILT_IN):
        return None
    try:
        config = _ENCODE.encode(spec.config)
    except (TypeError, ValueError, OverflowError):
        return None
    required = (type(spec.required).__name__, spec.required)  # True and 1.0 are equal keys otherwise
    return (spec.type, spec.name, spec.weight, required, spec.min_score, spec.negate, config, base_dir)


_BUILT_IN = "agentv_ci.graders."


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
