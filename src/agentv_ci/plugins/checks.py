"""The load-time check of a plugin class against its contract (see `contracts`).

Checked, in this order, so that the first message is the most useful one: a class; the right kind
for its namespace (a grader registered as a target is named as such); the declared plugin API
version; the config declaration (`Config` struct or a valid `config_schema`); the constructor and
method signatures, and which methods must (not) be `async`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from agentv_ci.plugins.config import config_style, schema_problem
from agentv_ci.plugins.contracts import (
    GRADERS_NAMESPACE,
    KINDS,
    REPORTERS_NAMESPACE,
    TARGETS_NAMESPACE,
)
from agentv_ci.plugins.versions import PLUGIN_API_VERSION, api_version_problem

# What marks a class as each kind, and the calls the core makes on it: (method, sample arguments,
# the signature the message shows, must be async).
_MARKERS = {GRADERS_NAMESPACE: "grade", TARGETS_NAMESPACE: "invoke", REPORTERS_NAMESPACE: "write"}
_CONSTRUCTORS: dict[str, tuple[tuple[Any, ...], dict[str, Any], str]] = {
    GRADERS_NAMESPACE: ((object(), object()), {"base_dir": object()}, "(spec, config, *, base_dir)"),
    TARGETS_NAMESPACE: ((object(), object()), {"base_dir": object()}, "(name, config, *, base_dir)"),
    REPORTERS_NAMESPACE: ((), {}, "()"),
}
_METHODS: dict[str, tuple[tuple[str, int, str, bool], ...]] = {
    GRADERS_NAMESPACE: (("grade", 1, "async def grade(self, ctx)", True),),
    TARGETS_NAMESPACE: (
        ("invoke", 1, "async def invoke(self, request)", True),
        ("aclose", 0, "async def aclose(self)", True),
    ),
    REPORTERS_NAMESPACE: (("write", 2, "def write(self, summary, options)", False),),
}


def is_builtin(cls: Any) -> bool:
    """A class shipped inside agentv-ci itself."""
    return str(getattr(cls, "__module__", "")).split(".")[0] == "agentv_ci"


def declared_api_version(cls: Any) -> str | None:
    """The plugin API version `cls` is written for (built-ins: always the current one)."""
    declared = getattr(cls, "api_version", None)
    if declared is None and is_builtin(cls):
        return PLUGIN_API_VERSION
    return declared if isinstance(declared, str) else None


def contract_problem(namespace: str, cls: Any, *, core_version: str) -> str | None:
    """What is wrong with `cls` as a plugin of `namespace`, or None when it meets the contract."""
    kind = KINDS[namespace]
    if not inspect.isclass(cls):
        return f"expected a class, got {type(cls).__name__} {cls!r}"
    marker = _MARKERS[namespace]
    if not hasattr(cls, marker):
        for other, other_marker in _MARKERS.items():
            if other != namespace and hasattr(cls, other_marker):
                return (
                    f"it is a {KINDS[other]} (it has `{other_marker}`), not a {kind}: "
                    f"register it under {other}"
                )
    if not is_builtin(cls) or hasattr(cls, "api_version"):
        problem = api_version_problem(getattr(cls, "api_version", None), core_version=core_version)
        if problem:
            return problem
    if namespace != REPORTERS_NAMESPACE:
        problem = _config_problem(cls)
        if problem:
            return problem
    args, kwargs, shown = _CONSTRUCTORS[namespace]
    if not _accepts(cls, args, kwargs):
        return f"the constructor must accept {shown}, but it is {cls.__name__}{_signature(cls)}"
    for method, arity, wanted, must_be_async in _METHODS[namespace]:
        function = getattr(cls, method, None)
        if function is None:
            return f"it has no `{method}` method (a {kind} needs `{wanted}`)"
        if not callable(function) or not _accepts(function, (object(),) * (arity + 1), {}):
            return f"`{method}` must be `{wanted}`, but it is `{method}{_signature(function)}`"
        if inspect.iscoroutinefunction(function) != must_be_async:
            return f"`{method}` must be `{wanted}`" + ("" if must_be_async else " (not async)")
    return None


def _config_problem(cls: Any) -> str | None:
    has_struct = hasattr(cls, "Config")
    has_schema = hasattr(cls, "config_schema")
    if has_struct and has_schema:
        return "it declares both `Config` and `config_schema`; keep one"
    if has_schema:
        schema = cls.config_schema
        if not isinstance(schema, dict):
            return f"`config_schema` must be a JSON Schema (a dict), got {type(schema).__name__}"
        return schema_problem(schema)
    if not has_struct:
        return "it declares no config: add `Config` (a msgspec.Struct) or `config_schema` (a JSON Schema)"
    if config_style(cls) != "msgspec":
        return "`Config` must be a msgspec.Struct subclass"
    return None


def _accepts(function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    try:
        inspect.signature(function).bind(*args, **kwargs)
    except TypeError:
        return False
    except ValueError:  # no signature (a builtin): do not judge it
        return True
    return True


def _signature(function: Callable[..., Any]) -> str:
    try:
        return str(inspect.signature(function))
    except (TypeError, ValueError):
        return "(...)"
