"""The targets an eval runs on, as dependencies: for each `cli` or coding-agent target (any target
that runs a command, or declares `sources:`), its code (`targets.sources`), its `cwd` and the
targets file declaring it. A change to the agent's script, a module it imports or its directory
tree therefore selects the evals that run it.

Errs towards running: a target name that cannot be resolved (an alias to an unset variable, a name
only `--target` would supply) counts as every code-running target the targets file declares."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from agentv_ci.errors import ConfigError
from agentv_ci.model.suite import Suite
from agentv_ci.targets.config import TargetDefinition, TargetsConfig, load_targets
from agentv_ci.targets.sources import CODE_PROVIDERS, target_sources

DEFAULT_TARGET = "default"
_COMMAND_KEYS = ("command", "executable", "binary")


def suite_target_names(suite: Suite, config: TargetsConfig, forced: Sequence[str] = ()) -> set[str]:
    """The target names the suite's tests run on: `--target` names when given, else each test's
    `execution.targets`/`target`, else the suite's, else `default`."""
    if forced:
        return set(forced)
    names: set[str] = set()
    suite_names = suite.execution.targets or ([suite.execution.target] if suite.execution.target else [])
    for test in suite.tests:
        own = test.execution.targets or ([test.execution.target] if test.execution.target else [])
        names.update(own or suite_names or [DEFAULT_TARGET])
    if not suite.tests:
        names.update(suite_names or [DEFAULT_TARGET])
    return names


def runs_code(definition: TargetDefinition) -> bool:
    """A target whose answers come from a program of the repository may: a `cli` or coding agent,
    anything with a command, or one that declares `sources:`."""
    if definition.sources is not None or definition.provider in CODE_PROVIDERS:
        return True
    return any(isinstance(definition.fields.get(key), str) for key in _COMMAND_KEYS)


def _closure(config: TargetsConfig, names: Iterable[str]) -> tuple[list[TargetDefinition], bool]:
    """The definitions behind `names` and their grader targets; True when one could not be resolved."""
    found: dict[str, TargetDefinition] = {}
    unresolved = False
    pending = list(names)
    seen: set[str] = set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            definition = config.resolve(name)
        except ConfigError:
            unresolved = unresolved or name != DEFAULT_TARGET or DEFAULT_TARGET in config.targets
            continue
        found[definition.name] = definition
        for alias_name in (config.targets[name].grader_target, definition.grader_target):
            if alias_name:
                pending.append(alias_name)
    return list(found.values()), unresolved


class TargetDependencies:
    """Per eval: the absolute paths its targets' code lives in. Targets files are read once per
    eval directory and each target's sources resolved once per directory."""

    def __init__(
        self,
        repo_root: Path,
        env: Mapping[str, str],
        targets_file: Path | None = None,
        forced: Sequence[str] = (),
    ) -> None:
        self.repo_root = repo_root
        self.env = env
        self.targets_file = targets_file
        self.forced = tuple(forced)
        self._configs: dict[Path, TargetsConfig | None] = {}
        self._sources: dict[tuple[Path, str], tuple[Path, ...]] = {}

    def _config(self, eval_path: Path) -> TargetsConfig | None:
        directory = eval_path.parent
        if directory not in self._configs:
            try:
                self._configs[directory] = load_targets(eval_path, explicit=self.targets_file, env=self.env)
            except ConfigError:
                self._configs[directory] = None  # the run reports it (exit 2)
        return self._configs[directory]

    def for_suite(self, eval_path: Path, suite: Suite) -> list[str]:
        config = self._config(eval_path)
        if config is None or config.path is None:
            return []
        definitions, unresolved = _closure(config, suite_target_names(suite, config, self.forced))
        if unresolved:
            definitions += [d for d in config.targets.values() if d.use_target is None]
        paths: dict[str, None] = {}
        for definition in definitions:
            if runs_code(definition):
                paths.update((str(p), None) for p in self._of(config, definition))
        return list(paths)

    def _of(self, config: TargetsConfig, definition: TargetDefinition) -> tuple[Path, ...]:
        base = config.base_dir
        key = (base, definition.name)
        known = self._sources.get(key)
        if known is None:
            declared_in = config.inherited_from.get(definition.name, config.path)
            sources = target_sources(
                definition, targets_file=declared_in, repo_root=self.repo_root, base_dir=base
            )
            extra: list[Path] = [declared_in] if declared_in is not None else []
            root = self.repo_root.resolve()
            if sources.cwd is not None and sources.cwd != root:
                extra.append(sources.cwd)  # where it runs: its files are the agent's input
            known = (*sources.paths, *extra)
            self._sources[key] = known
        return known
