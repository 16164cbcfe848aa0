"""The published eval-file schema plus the config schemas of installed third-party grader plugins.

Each plugin's config schema (msgspec's for a `Config` struct, or its own `config_schema`) is put under
`definitions/plugin:<type>` with its internal `$ref`s rewritten to that place, its type is added to the
`type` enum (completion), and one `if type == <name> then <its schema>` clause joins the grader
definition (validation). Built-in graders are described by the static schema already.
"""

from __future__ import annotations

import copy
from typing import Any

from agentv_ci.errors import ConfigError

__all__ = ["eval_schema_with_plugins"]

_COMMON = ("type", "name", "weight", "required", "min_score", "negate")


def _pointer_escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _rewrite_refs(node: Any, prefix: str) -> Any:
    """Every local `$ref` ("#...") made relative to `prefix` ("#/definitions/plugin:x")."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith("#"):
                out[key] = prefix + value[1:]
            else:
                out[key] = _rewrite_refs(value, prefix)
        return out
    if isinstance(node, list):
        return [_rewrite_refs(item, prefix) for item in node]
    return node


def _embed(plugin_schema: dict[str, Any], key: str) -> dict[str, Any]:
    embedded = copy.deepcopy(plugin_schema)
    embedded.pop("$schema", None)
    embedded.pop("$id", None)  # a base URI of its own would change how its `$ref`s resolve
    embedded = dict(_rewrite_refs(embedded, f"#/definitions/{_pointer_escape(key)}"))
    # The grader mapping holds the common fields too: a closed config must still allow them.
    target = embedded
    ref = embedded.get("$ref")
    defs = embedded.get("$defs") or embedded.get("definitions") or {}
    if isinstance(ref, str) and "/" in ref and ref.rsplit("/", 1)[1] in defs:
        target = defs[ref.rsplit("/", 1)[1]]
    if target.get("additionalProperties") is False:
        properties = target.setdefault("properties", {})
        for name in _COMMON:
            properties.setdefault(name, True)
    return embedded


def eval_schema_with_plugins(base: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """(`base` extended with every installed third-party grader's config schema, problems with
    plugins that could not be included)."""
    # lazy: the plugin registry and jsonschema, only for the schema with plugins
    from agentv_ci.plugins import GRADERS_NAMESPACE, list_plugins, load_plugin_class
    from agentv_ci.plugins.config import config_json_schema

    schema = copy.deepcopy(base)
    definitions = schema.setdefault("definitions", {})
    grader = definitions["grader"]
    names: list[str] = grader["properties"]["type"]["anyOf"][0]["enum"]
    clauses: list[dict[str, Any]] = []
    problems: list[str] = []
    for name in sorted({p.name for p in list_plugins(GRADERS_NAMESPACE)}):
        infos = [p for p in list_plugins(GRADERS_NAMESPACE) if p.name == name]
        if all(p.entry_point.startswith("agentv_ci.") for p in infos):
            continue  # built-in
        try:
            cls = load_plugin_class(GRADERS_NAMESPACE, name)
        except ConfigError as exc:
            problems.append(exc.message)
            continue
        plugin_schema = config_json_schema(cls) if cls is not None else None
        if plugin_schema is None:
            continue
        key = f"plugin:{name}"
        definitions[key] = _embed(plugin_schema, key)
        if name not in names:
            names.append(name)
        clauses.append(
            {
                "if": {"properties": {"type": {"const": name}}, "required": ["type"]},
                "then": {"$ref": f"#/definitions/{_pointer_escape(key)}"},
            }
        )
    if clauses:
        grader["allOf"] = [*grader.get("allOf", []), *clauses]
    return schema, problems
