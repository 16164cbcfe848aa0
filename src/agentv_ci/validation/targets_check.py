"""`validate` checks the targets files the eval files use, as it checks graders: each target's
provider must be installed (E205, with a did-you-mean; E203 when its plugin is broken), its keys
known to the provider's config (W108, E206 when the config is closed) and their values accepted by
it (E206, at the key). A targets file that cannot be read is E207. Missing `${{ VAR }}`s and API
keys are not errors here: CI validates without secrets."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from agentv_ci.errors import ConfigError
from agentv_ci.model.source import SourceLocation
from agentv_ci.validation.codes import severity_of
from agentv_ci.validation.diagnostics import Diagnostic

# Keys of a target entry the runner reads itself (besides targets.config.RUNNER_KEYS).
RUNNER_FIELDS = frozenset({"workers"})


def _diagnostic(code: str, message: str, loc: SourceLocation, hint: str | None = None) -> Diagnostic:
    return Diagnostic(severity_of(code), code, message, loc.file, loc.line, loc.col, hint)


def targets_files_of(eval_files: Iterable[Path]) -> list[Path]:
    """The targets file each eval file reads (the nearest one), each once, in first-use order."""
    from agentv_ci.targets.config import find_targets_file

    by_directory: dict[Path, Path | None] = {}
    found: dict[Path, None] = {}
    for eval_file in eval_files:
        directory = eval_file.parent
        if directory not in by_directory:
            by_directory[directory] = find_targets_file(eval_file)
        path = by_directory[directory]
        if path is not None:
            found[path.resolve()] = None
    return list(found)


def check_targets_file(path: Path, env: Mapping[str, str] | None = None) -> list[Diagnostic]:
    """Every problem of one targets file."""
    from agentv_ci.targets.config import parse_targets_file
    from agentv_ci.targets.environment import build_environment

    try:
        config = parse_targets_file(path, build_environment(path.parent, env=env))
    except ConfigError as exc:
        return [_diagnostic("E207", exc.message, exc.location or SourceLocation(str(path)), exc.hint)]
    diagnostics: list[Diagnostic] = []
    for name, definition in config.targets.items():
        if definition.use_target is not None:
            try:
                config.resolve(name)
            except ConfigError as exc:
                diagnostics.append(
                    _diagnostic("E207", exc.message, exc.location or definition.location, exc.hint)
                )
            continue
        diagnostics.extend(_check_definition(definition))
    return diagnostics


def _check_definition(definition: Any) -> list[Diagnostic]:
    from agentv_ci.loading.context import did_you_mean
    from agentv_ci.plugins import TARGETS_NAMESPACE, list_plugins, load_plugin_class
    from agentv_ci.plugins.config import config_issues, config_keys
    from agentv_ci.targets.config import PROVIDER_ALIASES, RUNNER_KEYS
    from agentv_ci.targets.factory import provider_fields

    provider: str = definition.provider
    at_provider = definition.key_locations.get("provider", definition.location)
    try:
        cls: Any = load_plugin_class(TARGETS_NAMESPACE, provider)
    except ConfigError as exc:
        return [_diagnostic("E203", exc.message, at_provider, exc.hint)]
    if cls is None:
        installed = sorted({p.name for p in list_plugins(TARGETS_NAMESPACE)})
        suggestion = did_you_mean(provider, [*installed, *PROVIDER_ALIASES])
        hint = (
            f"did you mean `{suggestion}`?" if suggestion else f"installed providers: {', '.join(installed)}"
        )
        return [
            _diagnostic(
                "E205", f"target {definition.name!r}: unknown provider {provider!r}", at_provider, hint
            )
        ]
    keys = config_keys(cls)
    aliases: dict[str, str] = getattr(cls, "FIELD_ALIASES", {})
    accepted = {*keys.names, *RUNNER_FIELDS, *aliases}
    diagnostics: list[Diagnostic] = []
    checked: dict[str, Any] = {}
    for key, value in definition.fields.items():
        if key in definition.missing_vars:
            continue  # an unset ${{ VAR }}: the run says so when it needs the value
        if key in accepted or keys.open:
            checked[key] = value
            continue
        suggestion = did_you_mean(key, sorted({*keys.names, *aliases, *RUNNER_FIELDS, *RUNNER_KEYS}))
        hint = (
            f"did you mean `{suggestion}`?"
            if suggestion
            else f"known keys of provider `{provider}`: {', '.join(sorted(keys.names))}"
        )
        code = "E206" if keys.closed else "W108"
        where = definition.key_locations.get(key, definition.location)
        diagnostics.append(
            _diagnostic(code, f"unknown key `{key}` for target provider `{provider}`", where, hint)
        )
    fields = provider_fields({k: v for k, v in checked.items() if k not in RUNNER_FIELDS}, cls)
    written = {ours: agentv for agentv, ours in aliases.items() if agentv in checked and ours not in checked}
    for issue in config_issues(cls, fields, unknown_keys=False):
        key = written.get(issue.key, issue.key) if issue.key else None
        where = definition.key_locations.get(key, definition.location) if key else definition.location
        message = f"invalid target {definition.name!r} ({provider}): {issue.message}"
        diagnostics.append(_diagnostic("E206", message, where))
    return diagnostics
