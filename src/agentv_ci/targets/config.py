"""`.agentv/targets.yaml`: the same file AgentV reads, so a user switching tools keeps it.

Shape (AgentV v4): `targets: [{name, provider, ...provider fields..., grader_target, use_target, ...}]`.
v5's `id` + `config: {...}` is accepted too. `${{ VAR }}` is interpolated (process env first, then the
nearest `.env` files); `use_target` makes an alias, followed at most 10 levels (as AgentV).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agentv_ci.errors import ConfigError, LoadError
from agentv_ci.loading.yaml_source import parse_yaml
from agentv_ci.model.source import SourceLocation
from agentv_ci.security.redaction import register_environment
from agentv_ci.targets.environment import build_environment, find_repo_root, interpolate
from agentv_ci.targets.sources import outside_repository

TARGET_FILE_NAMES = (".agentv/targets.yaml", ".agentv/targets.yml", "targets.yaml", "targets.yml")
MAX_ALIAS_DEPTH = 10  # as AgentV 4.42.4
# AgentV's spellings of the model API targets' fields -> ours (their `FIELD_ALIASES`).
MODEL_FIELD_ALIASES: Mapping[str, str] = {
    "endpoint": "base_url",
    "max_output_tokens": "max_tokens",
    "deployment": "model",
    "variant": "model",
}
# AgentV's other spellings of a provider (v4.42.4 `resolveTargetDefinition`).
PROVIDER_ALIASES = {
    "azure-openai": "azure",
    "claude-api": "anthropic",
    "google": "gemini",
    "google-gemini": "gemini",
    "claude-code": "claude",
    "cc-mirror": "claude",  # a Claude Code build under another name: give its `executable`
    "codex-cli": "codex",
    "copilot": "copilot-cli",
    "pi": "pi-coding-agent",
}
# Keys that belong to the runner, not to the provider's own Config.
RUNNER_KEYS = frozenset(
    {
        "name",
        "id",
        "provider",
        "use_target",
        "grader_target",
        "judge_target",
        "config",
        "fallback_targets",
        "sources",  # the files that are the target's code (targets.sources)
    }
)
SOURCES_HINT = "sources: [agent/, lib/*.py]  (paths or globs, relative to the project directory)"


class UnknownTargetError(ConfigError):
    """A target name that no targets file declares (and no built-in answers to)."""


class UnsetVariableError(ConfigError):
    """A target setting that comes from a `${{ VAR }}` whose variable is not set."""


@dataclass(frozen=True)
class TargetDefinition:
    """One entry of targets.yaml after interpolation."""

    name: str
    provider: str | None  # an open set: built-in providers and plugin targets by entry-point name
    fields: dict[str, Any]  # provider fields (runner keys removed)
    location: SourceLocation
    key_locations: dict[str, SourceLocation] = field(default_factory=dict)
    use_target: str | None = None
    grader_target: str | None = None
    missing_vars: dict[str, list[str]] = field(default_factory=dict)  # key -> unset ${{ VAR }} names
    # `sources:` as written: the paths/globs that are this target's code (None: found from its command)
    sources: tuple[str, ...] | None = None


@dataclass
class TargetsConfig:
    """Every target declared in one targets file (empty when none was found)."""

    path: Path | None
    targets: dict[str, TargetDefinition] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    eval_dir: Path | None = None  # the directory of the eval file these targets run
    inherited_from: dict[str, Path] = field(default_factory=dict)  # name -> the farther file declaring it
    aliased: dict[str, str] = field(default_factory=dict)  # name -> use_target, from an eval file's matrix

    @property
    def base_dir(self) -> Path:
        """Where relative paths in target fields (a cli `cwd`, replay `fixtures`) resolve: the eval
        file's directory, as AgentV (`cwd: ..` runs an agent one directory above the evals); without
        an eval file, the project dir holding `.agentv/`."""
        if self.eval_dir is not None:
            return self.eval_dir
        if self.path is None:
            return Path.cwd()
        parent = self.path.parent
        return parent.parent if parent.name == ".agentv" else parent

    def names(self) -> list[str]:
        return list(self.targets)

    def with_alias(self, name: str, use_target: str, location: SourceLocation | None) -> TargetsConfig:
        """This file's targets plus an eval file's matrix entry `{name, use_target}` (AgentV: an alias
        the eval file declares, used only when no targets file declares `name`)."""
        if name in self.targets:
            return self
        where = location or SourceLocation(str(self.path or self.base_dir))
        alias = TargetDefinition(
            name=name,
            provider=None,
            fields={},
            location=where,
            key_locations={"use_target": where},
            use_target=use_target,
        )
        return replace(
            self, targets={**self.targets, name: alias}, aliased={**self.aliased, name: use_target}
        )

    def resolve(self, name: str) -> TargetDefinition:
        """The concrete definition behind `name`, following `use_target` aliases."""
        seen: list[str] = []
        current = name
        for _ in range(MAX_ALIAS_DEPTH + 1):
            definition = self.targets.get(current)
            if definition is None:
                raise self._unknown(current, via=seen)
            seen.append(current)
            if definition.use_target is None:
                return definition
            if not definition.use_target:
                names = definition.missing_vars.get("use_target", [])
                hint = f"set the environment variable {names[0]}" if names else "set `use_target`"
                raise (UnsetVariableError if names else ConfigError)(
                    f"target {current!r} is an alias whose `use_target` is empty",
                    location=definition.key_locations.get("use_target", definition.location),
                    hint=hint,
                )
            current = definition.use_target
        raise ConfigError(
            f"target alias chain is longer than {MAX_ALIAS_DEPTH} levels: {' -> '.join(seen)}",
            location=self.targets[name].location,
        )

    def _unknown(self, name: str, *, via: list[str]) -> UnknownTargetError:

        where = str(self.path) if self.path else "no targets.yaml was found"
        close = difflib.get_close_matches(name, self.names(), n=1)
        hint = f"did you mean {close[0]!r}?" if close else None
        if self.path is None:
            hint = (
                "create .agentv/targets.yaml (see docs/targets.md) or pass --targets FILE; to try the "
                "evals without any model, use the built-in mock: --target mock (add --dry-run to check "
                "the wiring with placeholder answers, nothing gated)"
            )
        elif not hint:
            known = ", ".join(self.names()) or "none"
            hint = f"known targets: {known}; declare it in {self.path.name} or pass --targets FILE"
        chain = f" (via {' -> '.join(via)})" if via else ""
        return UnknownTargetError(f"unknown target {name!r}{chain} ({where})", hint=hint)


def targets_files_above(eval_path: Path) -> list[Path]:
    """Every targets file from the eval file's directory up to the repo root, then cwd, nearest first."""
    start = (eval_path if eval_path.is_dir() else eval_path.parent).resolve()
    root = find_repo_root(start)
    found: list[Path] = []
    for directory in (start, *start.parents):
        found.extend(directory / name for name in TARGET_FILE_NAMES if (directory / name).is_file())
        if root is not None and directory == root:
            break
    cwd = Path.cwd()
    found.extend(cwd / name for name in TARGET_FILE_NAMES if (cwd / name).is_file())
    return list(dict.fromkeys(found))


def find_targets_file(eval_path: Path, *, explicit: Path | None = None) -> Path | None:
    """`--targets` (file or dir), else walk from the eval file's dir to the repo root, then cwd."""
    if explicit is not None:
        if explicit.is_dir():
            for name in TARGET_FILE_NAMES:
                if (explicit / name).is_file():
                    return explicit / name
            raise ConfigError(f"no targets.yaml in directory {explicit}", hint="pass the file itself")
        if not explicit.is_file():
            raise ConfigError(f"targets file {explicit} does not exist")
        return explicit
    start = eval_path if eval_path.is_dir() else eval_path.parent
    start = start.resolve()
    root = find_repo_root(start)
    for directory in (start, *start.parents):
        for name in TARGET_FILE_NAMES:
            if (directory / name).is_file():
                return directory / name
        if root is not None and directory == root:
            break
    cwd = Path.cwd()
    for name in TARGET_FILE_NAMES:
        if (cwd / name).is_file():
            return cwd / name
    return None


def load_targets(
    eval_path: Path, *, explicit: Path | None = None, env: Mapping[str, str] | None = None
) -> TargetsConfig:
    """Find and parse the targets file for `eval_path`. Raises `ConfigError` with file:line:col."""
    path = find_targets_file(eval_path, explicit=explicit)
    start = eval_path if eval_path.is_dir() else eval_path.parent
    environment = build_environment(start.resolve(), env=env)
    register_environment(environment)  # secrets a `.env` file provides are masked like the process's
    if path is None:
        return TargetsConfig(path=None, env=environment, eval_dir=start.resolve())
    config = parse_targets_file(path, environment)
    config.eval_dir = start.resolve()
    if explicit is None:
        _inherit(config, targets_files_above(eval_path), environment)
    return config


def _inherit(config: TargetsConfig, chain: list[Path], env: Mapping[str, str]) -> None:
    """Targets the nearest file lacks, from the targets files farther up (a `grader_target: grader`
    that only the project's `.agentv/targets.yaml` declares). A farther file that cannot be parsed
    is skipped: it is not the file this suite reads, and a name it would have declared stays
    unknown, which is reported where it is used."""
    assert config.path is not None
    nearest = config.path.resolve()
    for other in chain:
        if other.resolve() == nearest:
            continue
        try:
            farther = parse_targets_file(other, env)
        except ConfigError:
            continue
        for name, definition in farther.targets.items():
            if name not in config.targets:
                config.targets[name] = definition
                config.inherited_from[name] = other


def parse_targets_file(path: Path, env: Mapping[str, str]) -> TargetsConfig:

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            f"cannot read targets file: {exc.strerror}", location=SourceLocation(str(path))
        ) from None
    try:
        doc = parse_yaml(text, str(path))
    except LoadError as exc:
        raise ConfigError(exc.message, location=exc.location, hint=exc.hint) from None
    data = doc.data
    entries_path: tuple[str | int, ...] = ()
    if isinstance(data, dict):
        data = data.get("targets")
        entries_path = ("targets",)
    if not isinstance(data, list):
        raise ConfigError(
            "targets file must hold a `targets:` list",
            location=doc.locate(entries_path),
            hint="targets:\n  - name: default\n    provider: mock",
        )
    config = TargetsConfig(path=path, env=env)
    for index, entry in enumerate(data):
        where = (*entries_path, index)
        definition = _parse_entry(entry, where, doc, env, path)
        if definition.name in config.targets:
            raise ConfigError(
                f"target {definition.name!r} is declared twice",
                location=definition.location,
                hint=f"first declared at {config.targets[definition.name].location}",
            )
        config.targets[definition.name] = definition
    return config


def _parse_entry(
    entry: Any, where: tuple[str | int, ...], doc: Any, env: Mapping[str, str], path: Path
) -> TargetDefinition:
    location: SourceLocation = doc.locate(where)
    if not isinstance(entry, dict):
        raise ConfigError("each target must be a mapping with `name` and `provider`", location=location)
    name = entry.get("name", entry.get("id"))
    if not isinstance(name, str) or not name:
        raise ConfigError("target has no `name`", location=location, hint="add `name: <target-name>`")
    key_locations = {str(key): doc.locate((*where, key), key=True) for key in entry}
    # one level down too (`pricing.input_per_mtok`), so a nested setting's error names its own line
    for key, value in entry.items():
        if isinstance(value, dict):
            for sub in value:
                key_locations[f"{key}.{sub}"] = doc.locate((*where, key, sub), key=True)
    missing_vars: dict[str, list[str]] = {}
    resolved: dict[str, Any] = {}
    for key, value in entry.items():
        missing: list[str] = []
        resolved[str(key)] = interpolate(value, env, missing)
        if missing:
            missing_vars[str(key)] = missing
    fields = {key: value for key, value in resolved.items() if key not in RUNNER_KEYS}
    nested = resolved.get("config")
    if isinstance(nested, dict):
        fields.update(nested)
        for key in nested:
            key_locations.setdefault(str(key), doc.locate((*where, "config", key), key=True))
        if "config" in missing_vars:
            for key in nested:
                missing_vars.setdefault(str(key), missing_vars["config"])
    use_target = resolved.get("use_target")
    provider = resolved.get("provider")
    if use_target is None and not isinstance(provider, str):
        raise ConfigError(
            f"target {name!r} has no `provider`",
            location=location,
            hint="e.g. provider: openai | anthropic | gemini | openrouter | claude | codex | cli | mock "
            "(all: `agentv-ci plugins`)",
        )
    if isinstance(provider, str):
        provider = PROVIDER_ALIASES.get(provider, provider)
    grader = resolved.get("grader_target", resolved.get("judge_target"))
    sources = _sources(resolved, nested, key_locations.get("sources", location), path)
    fields.pop("sources", None)
    return TargetDefinition(
        name=name,
        provider=provider if isinstance(provider, str) else None,
        fields=fields,
        location=location,
        key_locations=key_locations,
        use_target=None if use_target is None else str(use_target),
        grader_target=str(grader) if grader else None,
        missing_vars=missing_vars,
        sources=sources,
    )


def _sources(
    resolved: dict[str, Any], nested: Any, location: SourceLocation, path: Path
) -> tuple[str, ...] | None:
    """`sources:` (top level, or under v5's `config:`): a list of non-empty paths or globs, each
    inside the repository (a leading `/` is the repository root)."""
    raw = resolved.get("sources", nested.get("sources") if isinstance(nested, dict) else None)
    if raw is None:
        return None
    if not isinstance(raw, list) or not all(isinstance(item, str) and item.strip() for item in raw):
        raise ConfigError(
            "`sources` must be a list of paths or globs (strings)", location=location, hint=SOURCES_HINT
        )
    for item in raw:
        outside = outside_repository(item, path)
        if outside is not None:
            raise ConfigError(
                f"`sources` entry {item!r} resolves to {outside}, outside the repository",
                location=location,
                hint="list the files of the target's code inside the repository",
            )
    return tuple(item.strip() for item in raw)
