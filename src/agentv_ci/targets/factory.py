"""Build a target plugin instance from targets.yaml (or the built-in mock), and check one without
building it (what `validate` reports).

A target class may declare, besides its `Config`:

- `API_KEY_ENV`: the environment variable (or variables, first set wins) an empty `api_key` is read
  from; a real run refuses to start without one.
- `REQUIRED_FIELDS`: config keys that must be given (`command` of a `cli` target, ...).
- `FIELD_ALIASES`: AgentV's spelling of a field -> ours.
- `command_problems(config)`: where a command template would let data run as shell code
  (security/shell_values.py); a run refuses the target before its first test, `validate` says E501.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentv_ci.errors import ConfigError
from agentv_ci.plugins import (
    TARGETS_NAMESPACE,
    TargetPlugin,
    convert_plugin_config,
    list_plugins,
    load_plugin_class,
)
from agentv_ci.plugins.config import config_keys
from agentv_ci.security.redaction import SECRETS
from agentv_ci.targets.config import TargetDefinition, TargetsConfig, UnsetVariableError

if TYPE_CHECKING:
    from agentv_ci.model.source import SourceLocation
    from agentv_ci.security.shell_values import CommandProblem

BUILTIN_WITHOUT_CONFIG = frozenset({"mock"})


@dataclass(frozen=True)
class CheckedTarget:
    """A target definition whose provider is installed and whose config converted."""

    definition: TargetDefinition
    cls: Any
    config: Any


def check_target(name: str, targets: TargetsConfig, *, need_api_key: bool = False) -> CheckedTarget | None:
    """Everything a run checks about target `name` before its first test, short of building it:
    declared (aliases followed), provider installed, config valid, required fields present, and the
    API key when `need_api_key`. None for a built-in that needs no declaration (`mock`).
    Raises `ConfigError` located in targets.yaml."""
    if name not in targets.targets and name in BUILTIN_WITHOUT_CONFIG:
        return None
    definition = targets.resolve(name)
    provider = definition.provider or ""
    cls: Any = load_plugin_class(TARGETS_NAMESPACE, provider)
    if cls is None:
        raise unknown_provider(definition)
    fields = provider_fields(_with_api_key(definition, cls, targets, required=need_api_key), cls)
    SECRETS.add_config(fields)  # its key and headers are masked wherever they would be written
    for key in getattr(cls, "REQUIRED_FIELDS", ()):
        if fields.get(key) in (None, "", [], {}):
            unset = definition.missing_vars.get(key)
            hint = f"set the environment variable {unset[0]}" if unset else f"add `{key}:` to the target"
            raise (UnsetVariableError if unset else MissingFieldError)(
                f"target {definition.name!r} ({provider}) needs `{key}`",
                location=definition.key_locations.get(key, definition.location),
                hint=hint,
            )
    config = convert_plugin_config(
        cls,
        fields,
        what=f"target {definition.name!r} ({provider})",
        location=definition.location,
        key_locations=definition.key_locations,
    )
    for problem in command_problems(cls, config)[:1]:
        raise ShellCodeError(
            f"target {definition.name!r} ({provider}): {problem.message}",
            location=definition.key_locations.get(problem.key, definition.location),
            hint=problem.hint,
        )
    return CheckedTarget(definition, cls, config)


def command_problems(cls: Any, config: Any) -> list[CommandProblem]:
    """The target's `command_problems(config)`, when its class declares one."""
    finder = getattr(cls, "command_problems", None)
    return list(finder(config)) if callable(finder) else []


def create_target(name: str, targets: TargetsConfig, *, dry_run: bool = False) -> TargetPlugin:
    """The target called `name`, checked and built as `check_target` says (a missing API key is a
    `ConfigError` naming the environment variable, raised before any test runs).

    Under `dry_run` the target is still resolved and built exactly so (only the API key may be
    missing), then wrapped: the dry run's mock answers in its place.
    """
    # lazy: `targets.mock` loaded only when `create_target` runs
    from agentv_ci.targets.mock import MockConfig, MockTarget

    checked = check_target(name, targets, need_api_key=not dry_run)
    real: TargetPlugin
    if checked is None:
        real = MockTarget(name, MockConfig(), base_dir=targets.base_dir)
    else:
        real = checked.cls(name, checked.config, base_dir=targets.base_dir)
        _check_cwd(checked, targets.base_dir)
    if not dry_run:
        return real
    # lazy: `targets.dry_run` loaded only when `create_target` runs
    from agentv_ci.targets.dry_run import DryRunTarget

    return DryRunTarget(real, MockTarget(name, MockConfig(dry_run=True), base_dir=targets.base_dir))


def _check_cwd(checked: CheckedTarget, base_dir: Path) -> None:
    """A `cwd` that is not a directory is bad input, said before any test runs (not a crash at spawn)."""
    cwd = getattr(checked.config, "cwd", None)
    if not isinstance(cwd, str) or not cwd or (base_dir / cwd).is_dir():
        return
    definition = checked.definition
    raise ConfigError(
        f"target {definition.name!r}: `cwd` {cwd!r} is not a directory ({base_dir / cwd})",
        location=definition.key_locations.get("cwd", definition.location),
        hint="a relative cwd is read from the eval file's directory; create it or fix the path",
    )


def provider_fields(fields: dict[str, Any], cls: Any) -> dict[str, Any]:
    """A target's provider fields with AgentV's spellings (`FIELD_ALIASES`) renamed to the plugin's,
    when the plugin's own spelling is not given too."""
    fields = dict(fields)
    aliases: Mapping[str, str] = getattr(cls, "FIELD_ALIASES", {})
    for agentv_name, ours in aliases.items():
        if agentv_name in fields and ours not in fields:
            fields[ours] = fields.pop(agentv_name)
    return fields


class ShellCodeError(ConfigError):
    """A command template that puts data where the shell could run it (E501)."""


class MissingFieldError(ConfigError):
    """A target without a field its provider requires (`REQUIRED_FIELDS`)."""


class MissingApiKeyError(ConfigError):
    """A target whose API key variable is not set; `variable`: the one to set. A run on an event
    that withholds secrets (a fork's pull request) records its tests as not run instead."""

    def __init__(
        self, message: str, *, variable: str, location: SourceLocation | None, hint: str | None
    ) -> None:
        super().__init__(message, location=location, hint=hint)
        self.variable = variable


class UnknownProviderError(ConfigError):
    """A target whose `provider` no installed plugin registers."""


def unknown_provider(definition: TargetDefinition) -> UnknownProviderError:

    provider = definition.provider or ""
    installed = [p.name for p in list_plugins(TARGETS_NAMESPACE)]
    close = difflib.get_close_matches(provider, installed, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    hint += f"installed providers: {', '.join(installed)} (see `agentv-ci plugins`)"
    return UnknownProviderError(
        f"target {definition.name!r}: unknown provider {provider!r}",
        location=definition.key_locations.get("provider", definition.location),
        hint=hint,
    )


def _api_key_variables(cls: Any) -> tuple[str, ...]:
    declared: str | tuple[str, ...] | None = getattr(cls, "API_KEY_ENV", None)
    if declared is None:
        return ()
    return (declared,) if isinstance(declared, str) else tuple(declared)


def _with_api_key(
    definition: TargetDefinition, cls: Any, targets: TargetsConfig, *, required: bool
) -> dict[str, Any]:
    """Fill `api_key` from the provider's default variable(s); when `required`, refuse to start
    without one."""
    fields = dict(definition.fields)
    variables = _api_key_variables(cls)
    if not variables or "api_key" not in config_keys(cls).names or fields.get("api_key"):
        return fields
    missing = definition.missing_vars.get("api_key")
    if "api_key" not in fields:
        for variable in variables:
            if targets.env.get(variable):
                fields["api_key"] = targets.env[variable]
                return fields
    if not required:
        return fields
    variable = missing[0] if missing else " or ".join(variables)
    first = missing[0] if missing else variables[0]
    raise MissingApiKeyError(
        f"target {definition.name!r} ({definition.provider}) needs an API key: "
        f"environment variable {variable} is not set",
        location=definition.key_locations.get("api_key", definition.location),
        hint=f"export {first}=... (or put it in .env), or run with --dry-run",
        variable=first,
    )
