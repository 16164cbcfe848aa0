"""`validate` checks targets as it checks graders, in two passes.

The targets files the eval files use (found as `run` finds them, or `--targets`): each target's
provider must be installed (E205, with a did-you-mean; E203 when its plugin is broken), its keys
known to the provider's config (W108, E206 when the config is closed) and their values accepted by
it (E206, at the key). A targets file that cannot be read is E207.

The targets each suite names (`execution.target`/`targets`, test or suite, and `default` when the
targets file declares it or there is no targets file, plus each one's `grader_target`), or those
`--target` gives instead (as in `run`), as `run` checks them before its first test: the name is
declared (W111 where the eval file names it, E401 otherwise; E402 when there is no targets file at
all, so nothing but the built-in `mock` can run), its required fields are given (E206) and no
setting comes from an unset `${{ VAR }}` (W109). API keys are not asked for: CI validates without
secrets.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from agentv_ci.errors import ConfigError
from agentv_ci.loading.context import did_you_mean
from agentv_ci.model.codes import severity_of
from agentv_ci.model.diagnostics import Diagnostic
from agentv_ci.model.source import SourceLocation
from agentv_ci.model.suite import Suite, Test
from agentv_ci.plugins import TARGETS_NAMESPACE, list_plugins, load_plugin_class
from agentv_ci.plugins.config import config_issues, config_keys, convert_plugin_config
from agentv_ci.targets.config import (
    PROVIDER_ALIASES,
    RUNNER_KEYS,
    TargetsConfig,
    UnknownTargetError,
    UnsetVariableError,
    find_targets_file,
    load_targets,
    parse_targets_file,
)
from agentv_ci.targets.environment import build_environment
from agentv_ci.targets.factory import (
    CheckedTarget,
    MissingFieldError,
    check_target,
    command_problems,
    provider_fields,
)
from agentv_ci.targets.sources import SHELL_PROVIDERS, repository_root_of, target_sources

__all__ = ["TargetChecker", "check_targets_file", "targets_files_of"]

# Keys of a target entry the runner reads itself (besides targets.config.RUNNER_KEYS).
RUNNER_FIELDS = frozenset({"workers"})


def _diagnostic(code: str, message: str, loc: SourceLocation, hint: str | None = None) -> Diagnostic:
    return Diagnostic(severity_of(code), code, message, loc.file, loc.line, loc.col, hint)


def targets_files_of(eval_files: Iterable[Path], *, explicit: Path | None = None) -> list[Path]:
    """The targets file each eval file reads (`explicit`, else the nearest one), each once, in
    first-use order."""

    by_directory: dict[Path, Path | None] = {}
    found: dict[Path, None] = {}
    for eval_file in eval_files:
        directory = eval_file.parent
        if directory not in by_directory:
            try:
                by_directory[directory] = find_targets_file(eval_file, explicit=explicit)
            except ConfigError:
                by_directory[directory] = None  # a bad --targets: `validate` refuses it before
        path = by_directory[directory]
        if path is not None:
            found[path.resolve()] = None
    return list(found)


def _used_closure(config: TargetsConfig, used: Iterable[str]) -> set[str]:
    """`used` and every target they lead to (`use_target` aliases, `grader_target`s)."""
    seen: set[str] = set()
    pending = [name for name in used if name in config.targets]
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        definition = config.targets[name]
        for nxt in (definition.use_target, definition.grader_target):
            if isinstance(nxt, str) and nxt in config.targets:
                pending.append(nxt)
    return seen


def check_targets_file(
    path: Path, env: Mapping[str, str] | None = None, *, used: Iterable[str] | None = None
) -> list[Diagnostic]:
    """Every problem of one targets file; with `used`, of the targets the suites use (and those
    they lead to) only: a targets file shared with AgentV may declare providers agentv-ci has not."""

    try:
        config = parse_targets_file(path, build_environment(path.parent, env=env))
    except ConfigError as exc:
        return [_diagnostic("E207", exc.message, exc.location or SourceLocation(str(path)), exc.hint)]
    diagnostics: list[Diagnostic] = []
    wanted = None if used is None else _used_closure(config, used)
    for name, definition in config.targets.items():
        if wanted is not None and name not in wanted:
            continue
        if "use_target" in definition.missing_vars:
            continue  # an alias to an unset ${{ VAR }}: W109, from the suite pass
        if definition.use_target is not None:
            try:
                config.resolve(name)
            except ConfigError as exc:
                diagnostics.append(
                    _diagnostic("E207", exc.message, exc.location or definition.location, exc.hint)
                )
            continue
        diagnostics.extend(_check_definition(definition))
        diagnostics.extend(_whole_repository_key(definition, path))
    return diagnostics


def _whole_repository_key(definition: Any, targets_file: Path) -> list[Diagnostic]:
    """W113: a `cli` command that names no file of the repository (`make`, `npm run`, `python -c`) is
    keyed and selected on the whole repository; `sources:` says which files are its code."""

    if definition.provider not in SHELL_PROVIDERS or definition.sources is not None:
        return []
    try:
        found = target_sources(
            definition, targets_file=targets_file, repo_root=repository_root_of(targets_file)
        )
    except (OSError, ValueError):
        return []
    if found.repository is None:
        return []
    where = next(
        (
            definition.key_locations[k]
            for k in ("command", "executable", "binary")
            if k in definition.key_locations
        ),
        definition.location,
    )
    return [
        _diagnostic(
            "W113",
            f"target {definition.name!r}: its command names no file of the repository, so its answers are "
            "keyed (response cache) and its evals selected (--changed) on the whole repository",
            where,
            "list the agent's code under `sources:` (files, directories or globs) to narrow it",
        )
    ]


def _check_definition(definition: Any) -> list[Diagnostic]:

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
        if issue.path is not None and issue.path in definition.key_locations:  # a nested key's own line
            where = definition.key_locations[issue.path]
        message = f"invalid target {definition.name!r} ({provider}): {issue.message}"
        diagnostics.append(_diagnostic("E206", message, where))
    if not diagnostics:
        diagnostics.extend(_shell_problems(definition, cls, fields))
    return diagnostics


def _shell_problems(definition: Any, cls: Any, fields: dict[str, Any]) -> list[Diagnostic]:
    """E501: a command template that puts data where the shell could run it."""

    try:
        config = convert_plugin_config(cls, fields, what="target", location=definition.location)
    except ConfigError:
        return []  # E206, reported above
    return [
        _diagnostic(
            "E501",
            f"target {definition.name!r} ({definition.provider}): {problem.message}",
            definition.key_locations.get(problem.key, definition.location),
            problem.hint,
        )
        for problem in command_problems(cls, config)
    ]


DEFAULT_TARGET = "default"


def _located(code: str, error: ConfigError, where: SourceLocation | None, fallback: str) -> Diagnostic:
    location = where or error.location
    return Diagnostic(
        severity=severity_of(code),
        code=code,
        message=error.message,
        file=location.file if location else fallback,
        line=location.line if location else 0,
        col=location.col if location else 0,
        hint=error.hint,
    )


def _note_targets(
    test: Test, suite: Suite, config: TargetsConfig, used: dict[str, SourceLocation | None]
) -> None:
    for execution in (test.execution, suite.execution):
        names = execution.targets or ([execution.target] if execution.target else [])
        if names:
            for name in names:
                used.setdefault(name, execution.target_location)
            return
    if DEFAULT_TARGET in config.targets or config.path is None:  # no file: `default` is nowhere either
        used.setdefault(DEFAULT_TARGET, None)


class TargetChecker:
    """Checks suites' targets; targets files are read and each target checked once per run."""

    def __init__(
        self,
        *,
        targets_file: Path | None = None,
        env: Mapping[str, str] | None = None,
        cli_targets: Sequence[str] = (),
    ) -> None:
        self.targets_file = targets_file
        self.env = env
        self.cli_targets = tuple(dict.fromkeys(cli_targets))  # `--target`: replaces every suite's own
        self._configs: dict[Path, TargetsConfig | Diagnostic] = {}
        self._by_eval: dict[str, TargetsConfig | Diagnostic] = {}  # eval path -> its targets file
        self._checked: dict[tuple[str, str, str | None], list[Diagnostic]] = {}
        self.used: dict[Path, set[str]] = {}  # targets file -> the target names suites use

    def check(self, suite: Suite, used: dict[str, SourceLocation | None] | None = None) -> list[Diagnostic]:
        """The diagnostics of the targets `suite` uses: those `note` gathered in `used` as its tests
        were loaded, else those of `suite.tests`."""
        config = self._config_for(Path(suite.path))
        if isinstance(config, Diagnostic):
            return []  # the targets file itself is reported once, by `check_targets_file`
        diagnostics: list[Diagnostic] = []
        if self.cli_targets:
            names: dict[str, SourceLocation | None] = dict.fromkeys(self.cli_targets)
        else:
            names = used if used is not None else self._used_targets(suite, config)
        if config.path is not None:
            self.used.setdefault(config.path.resolve(), set()).update(names)
        aliases = suite.execution.target_hooks or {}
        for name, written_at in names.items():
            entry = aliases.get(name)
            if entry is not None and entry.use_target is not None and name not in config.targets:
                # the eval file's matrix alias (`{name, use_target}`): its `use_target` is what is checked
                aliased = config.with_alias(name, entry.use_target, entry.use_target_location)
                where = entry.use_target_location if written_at is not None else None
                diagnostics.extend(self._check_name(name, aliased, where, suite.path))
                continue
            diagnostics.extend(self._check_name(name, config, written_at, suite.path))
        return diagnostics

    def _config_for(self, eval_path: Path) -> TargetsConfig | Diagnostic:
        directory = eval_path.parent
        cached = self._configs.get(directory)
        if cached is None:
            try:
                cached = load_targets(eval_path, explicit=self.targets_file, env=self.env)
            except ConfigError as exc:
                cached = _located("E207", exc, None, str(eval_path))
            self._configs[directory] = cached
        return cached

    def config_of(self, suite: Suite) -> TargetsConfig | None:
        """The targets file `suite` reads (None: it cannot be read, reported once elsewhere)."""
        config = self._by_eval.get(suite.path)  # asked once per test: no Path built each time
        if config is None:
            config = self._by_eval[suite.path] = self._config_for(Path(suite.path))
        return None if isinstance(config, Diagnostic) else config

    def note(self, suite: Suite, test: Test, used: dict[str, SourceLocation | None]) -> None:
        """Add the targets `test` of `suite` runs against to `used` (one test at a time, as a
        dataset is loaded without holding its tests)."""
        if self.cli_targets:
            return  # `--target` replaces the suites' own names, as in `run`
        config = self._by_eval.get(suite.path)
        if config is None:
            config = self._by_eval[suite.path] = self._config_for(Path(suite.path))
        if not isinstance(config, Diagnostic):
            _note_targets(test, suite, config, used)

    @staticmethod
    def _used_targets(suite: Suite, config: TargetsConfig) -> dict[str, SourceLocation | None]:
        """Target name -> where the eval file named it (None: the implicit `default`)."""
        used: dict[str, SourceLocation | None] = {}
        for test in suite.tests:
            _note_targets(test, suite, config, used)
        return used

    def _check_name(
        self, name: str, config: TargetsConfig, written_at: SourceLocation | None, eval_path: str
    ) -> list[Diagnostic]:
        key = (str(config.path), name, config.aliased.get(name))
        if key not in self._checked:
            found, checked = _check(
                name,
                config,
                unknown_at=written_at,
                fallback=eval_path,
                in_eval=written_at is not None and not self.cli_targets,
            )
            owner = checked.definition if checked is not None else None
            if owner is not None and owner.grader_target:
                where = owner.key_locations.get("grader_target", owner.key_locations.get("judge_target"))
                found += _check(owner.grader_target, config, unknown_at=where, fallback=eval_path)[0]
            self._checked[key] = found
            return found
        if written_at is None:
            if config.path is None:  # the implicit `default`, with no file: reported in each eval file
                return [_at_file(d, eval_path) for d in self._checked[key]]
            return self._checked[key]
        # An unknown target named by several eval files is reported where each one names it.
        return [
            msgspec.structs.replace(d, file=written_at.file, line=written_at.line, col=written_at.col)
            if d.code in _UNKNOWN and d.message.startswith(f"unknown target {name!r}")
            else d
            for d in self._checked[key]
        ]


def _at_file(diagnostic: Diagnostic, eval_path: str) -> Diagnostic:
    if diagnostic.code != "E402":
        return diagnostic
    return msgspec.structs.replace(diagnostic, file=eval_path, line=0, col=0)


def _check(
    name: str,
    config: TargetsConfig,
    *,
    unknown_at: SourceLocation | None,
    fallback: str,
    in_eval: bool = False,
) -> tuple[list[Diagnostic], CheckedTarget | None]:
    """Diagnostics for target `name` (an unknown name located at `unknown_at`), and the checked target.

    An unknown name the eval file itself writes is W111 (E401 under `--strict`): `run --target NAME`
    replaces it, as AgentV projects often do; an unknown `grader_target` in targets.yaml is E401.
    With no targets file at all, a name other than the built-in `mock` (written in the eval file,
    the implicit `default`, or given by `--target`) is E402: `run` refuses it whatever the flags,
    short of `--targets FILE` or `--target mock`."""
    try:
        return [], check_target(name, config)
    except ConfigError as exc:
        code = _CODES.get(type(exc))
        if code is None:  # provider, keys and values: reported for every target by the file pass
            return [], None
        if code == "E401" and config.path is None:
            code = "E402"
        elif code == "E401" and in_eval:
            code = "W111"
        located = unknown_at if code in _UNKNOWN else None
        return [_located(code, exc, located, fallback)], None


_UNKNOWN = ("E401", "E402", "W111")


_CODES: dict[type[ConfigError], str] = {
    UnknownTargetError: "E401",
    MissingFieldError: "E206",
    UnsetVariableError: "W109",
}
