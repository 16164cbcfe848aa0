"""A plugin's own configuration: a msgspec Struct (`Config`) or a JSON Schema (`config_schema`).

The raw YAML keys of a grader (minus the common fields) or a target (minus the runner's keys) are
converted here, for the runner (`convert_plugin_config`: the first problem is a `ConfigError` located
at the offending key) and for `validate` (`config_issues`: every problem, each with its key). A
`Config` struct is converted with `msgspec.convert`; a `config_schema` is checked with `jsonschema`
(imported only when such a plugin is used) and the plugin receives the validated dict.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from agentv_ci.errors import ConfigError
from agentv_ci.model.source import SourceLocation

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

ConfigStyle = Literal["msgspec", "json-schema"]

__all__ = [
    "ConfigIssue",
    "ConfigKeys",
    "ConfigStyle",
    "config_issues",
    "config_json_schema",
    "config_keys",
    "config_style",
    "convert_config",
    "convert_plugin_config",
    "schema_problem",
]


def config_style(cls: Any) -> ConfigStyle | None:
    """How `cls` declares its config: a `Config` Struct, a `config_schema`, or neither (None)."""
    config = getattr(cls, "Config", None)
    if isinstance(config, type) and issubclass(config, msgspec.Struct):
        return "msgspec"
    if isinstance(getattr(cls, "config_schema", None), dict):
        return "json-schema"
    return None


@dataclass(frozen=True)
class ConfigKeys:
    """The keys a plugin's config knows. `closed`: an unknown key is an error at run time too
    (`forbid_unknown_fields`, `additionalProperties: false`); `open`: any key is accepted (a schema
    without `properties`)."""

    names: tuple[str, ...]
    closed: bool = False
    open: bool = False


def config_keys(cls: Any) -> ConfigKeys:
    if config_style(cls) == "msgspec":
        config = cls.Config
        names = tuple(f.encode_name for f in msgspec.structs.fields(config))
        return ConfigKeys(names, closed=bool(config.__struct_config__.forbid_unknown_fields))
    schema = getattr(cls, "config_schema", None)
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return ConfigKeys((), open=True)
    extra = schema.get("additionalProperties", True)
    return ConfigKeys(
        tuple(schema["properties"]),
        closed=extra is False,
        open=extra not in (True, False) or "patternProperties" in schema,
    )


@dataclass(frozen=True)
class ConfigIssue:
    """One problem in a config; `key` is the top-level key it is about (None: the whole config),
    `path` the dotted path of the value (`pricing.input_per_mtok`) when msgspec names one."""

    message: str
    key: str | None = None
    path: str | None = None


def config_issues(cls: Any, raw: dict[str, Any], *, unknown_keys: bool = True) -> list[ConfigIssue]:
    """Every problem of `raw` against the plugin's config (msgspec reports only its first one).

    `unknown_keys=False` leaves out `additionalProperties` errors of the top level, for callers that
    report unknown keys themselves (with a did-you-mean hint)."""
    if config_style(cls) == "msgspec":
        try:
            msgspec.convert(raw, cls.Config, strict=False)
        except msgspec.ValidationError as exc:
            return [ConfigIssue(str(exc), _msgspec_key(str(exc)), _msgspec_path(str(exc)))]
        return []
    issues: list[ConfigIssue] = []
    for error in sorted(_validator(cls).iter_errors(raw), key=_error_order):
        if not unknown_keys and error.validator == "additionalProperties" and not error.absolute_path:
            continue
        first = error.absolute_path[0] if error.absolute_path else None
        where = f" - at `{error.json_path}`" if error.absolute_path else ""
        issue = ConfigIssue(f"{error.message}{where}", first if isinstance(first, str) else None)
        if issue not in issues:
            issues.append(issue)
    return issues


def _error_order(error: Any) -> tuple[list[tuple[int, int, str]], str]:
    """Errors by where they are (array indexes numerically), then by message."""
    where = [(1, p, "") if isinstance(p, int) else (2, 0, str(p)) for p in error.absolute_path]
    return where, str(error.message)


def _msgspec_path(message: str) -> str | None:
    if " - at `$." not in message:
        return None
    return message.rsplit(" - at `$.", 1)[1].rstrip("`")


def _msgspec_key(message: str) -> str | None:
    path = _msgspec_path(message)
    return None if path is None else path.split(".")[0].split("[")[0]


def key_location(
    key_locations: dict[str, SourceLocation], path: str | None, fallback: SourceLocation | None
) -> SourceLocation | None:
    """Where the value at the dotted `path` was written: the deepest of its keys that
    `key_locations` knows (`pricing.input_per_mtok`, else `pricing`), else `fallback`."""
    parts = (path or "").split("[")[0].split(".")
    while parts and parts[0]:
        found = key_locations.get(".".join(parts))
        if found is not None:
            return found
        parts.pop()
    return fallback


def convert_config(
    config_cls: type[msgspec.Struct],
    raw: dict[str, Any],
    *,
    what: str,
    location: SourceLocation | None,
    key_locations: dict[str, SourceLocation] | None = None,
) -> Any:
    """Convert raw YAML config into a Config struct; errors point at the offending key."""
    try:
        return msgspec.convert(raw, config_cls, strict=False)
    except msgspec.ValidationError as exc:
        message = str(exc)
        loc = key_location(key_locations or {}, _msgspec_path(message), location)
        raise ConfigError(f"invalid {what}: {message}", location=loc) from None


def convert_plugin_config(
    cls: Any,
    raw: dict[str, Any],
    *,
    what: str,
    location: SourceLocation | None,
    key_locations: dict[str, SourceLocation] | None = None,
) -> Any:
    """The config object `cls`'s constructor receives: its `Config` struct, or `raw` itself once it
    validates against `config_schema`. Raises `ConfigError` at the first offending key."""
    if config_style(cls) == "msgspec":
        return convert_config(cls.Config, raw, what=what, location=location, key_locations=key_locations)
    issues = config_issues(cls, raw)
    if issues:
        first = issues[0]
        loc = (key_locations or {}).get(first.key, location) if first.key else location
        more = (
            f" (and {len(issues) - 1} more problem(s); `agentv-ci validate` lists them)"
            if len(issues) > 1
            else ""
        )
        raise ConfigError(f"invalid {what}: {first.message}{more}", location=loc)
    return dict(raw)


def config_json_schema(cls: Any) -> dict[str, Any] | None:
    """The JSON Schema of the plugin's config (msgspec's for a `Config` struct), for editors."""
    style = config_style(cls)
    if style == "msgspec":
        schema: dict[str, Any] = msgspec.json.schema(cls.Config)
        return schema
    if style == "json-schema":
        return copy.deepcopy(cls.config_schema)  # type: ignore[no-any-return]
    return None


def schema_problem(schema: dict[str, Any]) -> str | None:
    """Why `schema` is not a usable JSON Schema for a config (None when it is)."""
    # lazy: jsonschema loaded only when `schema_problem` runs
    from jsonschema import Draft202012Validator, SchemaError, validators

    validator_cls = validators.validator_for(schema, default=Draft202012Validator)
    try:
        validator_cls.check_schema(schema)
    except SchemaError as exc:
        where = f" at `{exc.json_path}`" if exc.absolute_path else ""
        return f"`config_schema` is not a valid JSON Schema: {exc.message}{where}"
    kind = schema.get("type", "object")
    if kind != "object" and not (isinstance(kind, list) and "object" in kind):
        return f'`config_schema` must describe a mapping (`"type": "object"`), not {kind!r}'
    return None


_VALIDATORS: dict[type[Any], Validator] = {}


def _validator(cls: type[Any]) -> Validator:
    """A validator per plugin class, built once (building one re-checks the schema: slow)."""
    validator = _VALIDATORS.get(cls)
    if validator is None:
        # lazy: jsonschema loaded only when `_validator` runs
        from jsonschema import Draft202012Validator, validators

        schema = cls.config_schema  # type: ignore[attr-defined]
        validator_cls = validators.validator_for(schema, default=Draft202012Validator)
        validator = validator_cls(schema, format_checker=validator_cls.FORMAT_CHECKER)
        _VALIDATORS[cls] = validator
    return validator
