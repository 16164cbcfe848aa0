"""Build a target plugin instance from targets.yaml (or the built-in mock)."""

from __future__ import annotations

from typing import Any

from agentv_ci.errors import ConfigError
from agentv_ci.plugins import TARGETS_NAMESPACE, TargetPlugin, convert_plugin_config, load_plugin_class
from agentv_ci.plugins.config import config_keys
from agentv_ci.security.redaction import SECRETS
from agentv_ci.targets.config import TargetDefinition, TargetsConfig

BUILTIN_WITHOUT_CONFIG = frozenset({"mock"})


def create_target(name: str, targets: TargetsConfig, *, dry_run: bool = False) -> TargetPlugin:
    """The target called `name`. Under `dry_run` every target is the mock (echoes expected output).

    A missing API key is a `ConfigError` naming the environment variable, raised here, i.e. before
    any test runs. A name that is not declared but is a built-in provider without required
    config (`mock`) gets that provider with defaults.
    """
    from agentv_ci.targets.mock import MockConfig, MockTarget

    if dry_run:
        return MockTarget(name, MockConfig(dry_run=True), base_dir=targets.base_dir)
    if name not in targets.targets and name in BUILTIN_WITHOUT_CONFIG:
        return MockTarget(name, MockConfig(), base_dir=targets.base_dir)
    definition = targets.resolve(name)
    provider = definition.provider or ""
    cls: Any = load_plugin_class(TARGETS_NAMESPACE, provider)
    if cls is None:
        raise ConfigError(
            f"target {definition.name!r}: unknown provider {provider!r}",
            location=definition.key_locations.get("provider", definition.location),
            hint="built-in providers: mock, replay, cli, openai, azure, anthropic (see `agentv-ci plugins`)",
        )
    fields = provider_fields(_with_api_key(definition, cls, targets), cls)
    SECRETS.add_config(fields)  # its key and headers are masked wherever they would be written
    config = convert_plugin_config(
        cls,
        fields,
        what=f"target {definition.name!r} ({provider})",
        location=definition.location,
        key_locations=definition.key_locations,
    )
    target: TargetPlugin = cls(name, config, base_dir=targets.base_dir)
    return target


def provider_fields(fields: dict[str, Any], cls: Any) -> dict[str, Any]:
    """A target's provider fields with AgentV's spellings (`FIELD_ALIASES`) renamed to the plugin's,
    when the plugin's own spelling is not given too."""
    fields = dict(fields)
    aliases: dict[str, str] = getattr(cls, "FIELD_ALIASES", {})
    for agentv_name, ours in aliases.items():
        if agentv_name in fields and ours not in fields:
            fields[ours] = fields.pop(agentv_name)
    return fields


def _with_api_key(definition: TargetDefinition, cls: Any, targets: TargetsConfig) -> dict[str, Any]:
    """Fill `api_key` from the provider's default variable; refuse to start without one."""
    fields = dict(definition.fields)
    default_var: str | None = getattr(cls, "API_KEY_ENV", None)
    if default_var is None or "api_key" not in config_keys(cls).names:
        return fields
    if fields.get("api_key"):
        return fields
    missing = definition.missing_vars.get("api_key")
    if "api_key" not in fields and targets.env.get(default_var):
        fields["api_key"] = targets.env[default_var]
        return fields
    variable = missing[0] if missing else default_var
    raise ConfigError(
        f"target {definition.name!r} ({definition.provider}) needs an API key: "
        f"environment variable {variable} is not set",
        location=definition.key_locations.get("api_key", definition.location),
        hint=f"export {variable}=... (or put it in .env), or run with --dry-run",
    )
