"""The targets an eval runs on, as dependencies: for each `cli` or coding-agent target (any target
that runs a command, or declares `sources:`), its code (`targets.sources`), its `cwd` and the
targets file declaring it. A change to the agent's script, a module it imports or its directory
tree therefore selects the evals that run it.

Errs towards running: a target name that cannot be resolved (an alias to an unset variable, a name
only `--target` would supply) counts as every code-running target the targets file declares."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from agentv_ci.errors import ConfigError
from agentv_ci.model.suite import Suite
from agentv_ci.targets.config import (
    TargetDefinition,
    TargetsConfig,
    load_targets,
    parse_targets_file,
    targets_files_above,
)
from agentv_ci.targets.environment import build_environment
from agentv_ci.targets.sources import CODE_PROVIDERS, TargetSources, target_sources

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
    aliases = suite.execution.target_hooks or {}  # the eval file's `{name, use_target}` entries
    return {
        entry.use_target if (entry := aliases.get(n)) and entry.use_target and n not in config.targets else n
        for n in names
    }


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


def _file_may_run_code(path: Path, env: Mapping[str, str]) -> bool:
    """A target of the file runs code, or its provider or alias depends on an unset variable (a
    nearer `.env` may set it). A file that cannot be parsed: the run reports it; True here."""
    try:
        config = parse_targets_file(path, build_environment(path.parent, env=env))
    except ConfigError:
        return True
    return any(
        runs_code(d) or "provider" in d.missing_vars or "use_target" in d.missing_vars
        for d in config.targets.values()
    )


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
        self._runs_code: dict[Path | None, bool] = {}  # targets file -> may any target run code
        self._sources: dict[tuple[Path, str], tuple[tuple[Path, str], ...]] = {}

    def _config(self, eval_path: Path) -> TargetsConfig | None:
        directory = eval_path.parent
        if directory not in self._configs:
            try:
                self._configs[directory] = load_targets(eval_path, explicit=self.targets_file, env=self.env)
            except ConfigError:
                self._configs[directory] = None  # the run reports it (exit 2)
        return self._configs[directory]

    def _may_run_code(self, path: Path | None) -> bool:
        """Whether the targets file the eval reads (`path`), or one it inherits from, declares a
        target that may run code: when none does, the eval's targets need not be resolved
        (thousands of eval directories share a few targets files of model targets)."""
        if path not in self._runs_code:
            self._runs_code[path] = path is not None and any(
                _file_may_run_code(file, self.env) for file in (path, *targets_files_above(path))
            )
        return self._runs_code[path]

    def for_suite(self, eval_path: Path, suite: Suite, targets_file: Path | None) -> dict[str, str]:
        """The paths of the code the suite's targets run, each with why it counts for a directory (a
        phrase for a selection reason; "" for a file); `targets_file` is the one `eval_path` reads
        (as `find_targets_file` finds it)."""
        if not self._may_run_code(targets_file):
            return {}
        config = self._config(eval_path)
        if config is None or config.path is None:
            return {}
        definitions, unresolved = _closure(config, suite_target_names(suite, config, self.forced))
        if unresolved:
            definitions += [d for d in config.targets.values() if d.use_target is None]
        paths: dict[str, str] = {}
        for definition in definitions:
            if runs_code(definition):
                for path, why in self._of(config, definition):
                    paths.setdefault(str(path), why)
        return paths

    def _of(self, config: TargetsConfig, definition: TargetDefinition) -> tuple[tuple[Path, str], ...]:
        base = config.base_dir
        key = (base, definition.name)
        known = self._sources.get(key)
        if known is None:
            declared_in = config.inherited_from.get(definition.name, config.path)
            sources = target_sources(
                definition, targets_file=declared_in, repo_root=self.repo_root, base_dir=base
            )
            found: dict[Path, str] = {}
            for path, why in _explained(sources, declared_in, self.repo_root.resolve()):
                found.setdefault(path, why)
            known = tuple(found.items())
            self._sources[key] = known
        return known


def _explained(sources: TargetSources, declared_in: Path | None, root: Path) -> Iterator[tuple[Path, str]]:
    """Each path of the target's code with why it counts ("" for a file): a reason naming only the
    directory ("under examples/") would not say that it is where the target runs."""
    name = f"target '{sources.target}'"
    yield from ((path, "") for path in sources.files)
    tree = f"in the `sources:` of {name}" if sources.declared else f"the script directory of {name}"
    yield from ((path, tree) for path in sources.directories)
    yield from ((path, f"in the `sources:` of {name}") for path in sources.glob_roots)
    if sources.repository is not None:
        yield sources.repository, f"the code of {name}: its command names no file"
    if declared_in is not None:
        yield declared_in, ""
    if sources.cwd is not None and sources.cwd != root:
        yield sources.cwd, f"the working directory of {name}"  # its files are the agent's input
