"""`load_suite` / `load_suites`: one eval file (or JSONL dataset with its sidecar) -> `Suite`.

Never raises for bad user input: every problem becomes a `Diagnostic`.

A run (and `validate`) loads in `check` mode: every test is built and checked, but the tests of a
suite that reads a JSONL dataset are not kept; the run reads them again with `stream_suite_tests`,
one at a time as it schedules them. However large a dataset, it is never held in memory.
"""

from __future__ import annotations

import gc
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import msgspec

from agentv_ci.loading.cases import CaseExpander, IncludedSuite, RawCase, check_select, is_selected
from agentv_ci.loading.context import LineLocator, LoadContext, Node, type_name
from agentv_ci.loading.dependencies import check_dependencies
from agentv_ci.loading.discovery import find_eval_files, jsonl_sidecar
from agentv_ci.loading.documents import parse_document, read_text
from agentv_ci.loading.execution import merge_execution, parse_execution
from agentv_ci.loading.graders import GraderNormaliser
from agentv_ci.loading.interpolate import dotenv_candidates, merge_env
from agentv_ci.loading.keys import SUITE_DEPRECATED, SUITE_KEYS, TESTS_ALIASES
from agentv_ci.loading.matrix_targets import warn_hooks_without_workspace
from agentv_ci.loading.messages import normalise_input
from agentv_ci.loading.paths import find_repo_root, safe_resolve
from agentv_ci.loading.seen_keys import SeenKeys
from agentv_ci.loading.tests_builder import SuiteDefaults, TestBuilder, resolve_input_files
from agentv_ci.model.source import SourceLocation
from agentv_ci.model.suite import ExecutionSpec, GraderSpec, Suite, Test
from agentv_ci.security.confinement import Confinement
from agentv_ci.security.file_reads import allow_for_plugins
from agentv_ci.validation.diagnostics import Diagnostic, sort_key

NAME_PATTERN = re.compile(r"^[a-z0-9-]+$")
_EMPTY: dict[str, Any] = {}


class LoadResult(msgspec.Struct):
    """A suite (None when the file could not be read or parsed), every diagnostic found, and every file
    the load read or looked for (absolute paths; directories for case dirs and globs): the suite's
    `dependencies`, kept here too for a file that failed to load."""

    suite: Suite | None
    diagnostics: list[Diagnostic]
    dependencies: list[str] = []
    # A `check` load did not keep the tests (they come from a JSONL dataset): `suite.tests` is empty
    # and `stream_suite_tests` reads them.
    streamed: bool = False

    @property
    def ok(self) -> bool:
        return self.suite is not None and not any(d.severity == "error" for d in self.diagnostics)


def default_suite_name(path: Path) -> str:
    name = path.name
    for suffix in (".eval.yaml", ".eval.yml", ".yaml", ".yml", ".jsonl"):
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


LoadMode = Literal["keep", "check"]
# Called with each test a `check` load builds (and the suite as far as a plan needs it: name, path,
# tags, execution); the test is dropped after.
TestVisitor = Callable[[Suite, Test], None]
Built = tuple[Test, "Node | SourceLocation"]


@dataclass
class _Prepared:
    """An eval file read and its suite-level settings checked; its tests not built yet."""

    path: Path
    data: dict[str, Any]
    root: Node
    name: str
    execution: ExecutionSpec
    metadata: dict[str, Any]
    defaults: SuiteDefaults
    builder: TestBuilder
    entries: Iterable[RawCase | IncludedSuite]


class _SuiteLoader:
    def __init__(self, ctx: LoadContext, on_test: TestVisitor | None = None) -> None:
        self.ctx = ctx
        self.on_test = on_test
        self.streamed = False  # a `check` load found tests read from a JSONL dataset: not kept

    def load(
        self,
        path: Path,
        stack: tuple[Path, ...] = (),
        where: SourceLocation | None = None,
        *,
        mode: LoadMode = "keep",
    ) -> Suite | None:
        """The suite of `path`. `keep`: with its tests. `check`: every test is built and checked as
        in `keep`, handed to `on_test` and dropped, unless the suite reads none from a JSONL dataset
        (then they are kept, as in `keep`): a dataset of any size costs no memory, and `stream`
        builds its tests again as they are wanted."""
        prepared = self._prepare(path, stack, where, lazy=mode != "keep")
        if prepared is None:
            return None
        built = self._tests_of(prepared, (*stack, prepared.path))
        kept: list[Built] | None
        if mode == "keep":
            kept = list(built)
            check_duplicate_ids(kept, self.ctx)
            check_dependencies(kept, self.ctx)
        else:
            kept = self._check(prepared, built, stack)
        return self._suite(prepared, [t for t, _ in kept] if kept is not None else [])

    def stream(self, path: Path) -> Iterator[Test]:
        """The tests of `path` built again, one at a time as they are taken (a JSONL dataset is read
        line by line): the second reading of a suite that a `check` load did not keep."""
        prepared = self._prepare(path, (), None, lazy=True)
        if prepared is not None:
            for test, _ in self._tests_of(prepared, (prepared.path,)):
                yield test

    def _prepare(
        self, path: Path, stack: tuple[Path, ...], where: SourceLocation | None, *, lazy: bool
    ) -> _Prepared | None:
        ctx = self.ctx
        path = safe_resolve(path) if path.exists() else path.absolute()
        jsonl: Path | None = None
        config_path: Path | None = path
        if path.suffix.lower() == ".jsonl":
            jsonl, config_path = path, jsonl_sidecar(path)
        data: Any = {}
        root: Node | None = None
        if config_path is not None:
            text = read_text(config_path, ctx, where)
            if text is None:
                return None
            doc = parse_document(text, config_path, ctx)
            if doc is None:
                return None
            data, root = doc.data, Node(doc)
            if data is None:
                data = {}
        if root is None:
            from agentv_ci.loading.context import FileLocator

            root = Node(FileLocator(str(path)))
        if not isinstance(data, dict):
            hint = "a list at the top level is a raw case file; reference it from an eval file with `tests:`"
            ctx.error(
                "E101",
                f"an eval file must be a mapping, got {type_name(data)}",
                root,
                hint=hint if isinstance(data, list) else None,
            )
            return None
        return self._settings(path, data, root, jsonl, (*stack, path), lazy=lazy)

    def _settings(
        self,
        path: Path,
        data: dict[str, Any],
        root: Node,
        jsonl: Path | None,
        stack: tuple[Path, ...],
        *,
        lazy: bool,
    ) -> _Prepared:
        ctx = self.ctx
        ctx.check_keys(data, root, SUITE_KEYS, "an eval file", SUITE_DEPRECATED)
        name = self._name(data, root, path)
        if "execution" in data and "experiment" in data:
            ctx.error(
                "E113",
                "use either `execution:` or `experiment:`, not both",
                root.child("experiment"),
                key=True,
            )
        execution = parse_execution(data.get("execution"), root.child("execution"), ctx, suite_level=True)
        experiment = data.get("experiment")
        if isinstance(experiment, dict) and "name" in experiment and not isinstance(experiment["name"], str):
            ctx.error("E101", "experiment name must be a string", root.child("experiment").child("name"))
        execution = parse_execution(experiment, root.child("experiment"), ctx, execution, suite_level=True)
        if "target" in data and execution.target is None and isinstance(data["target"], str):
            execution.target = data["target"]

        graders_norm = GraderNormaliser(ctx, path.parent)
        graders: list[GraderSpec] = []
        for key in ("assertions", "assert", "evaluators", "evaluator"):
            if key in data:
                graders += graders_norm.normalise_list(data[key], root.child(key))
        exec_raw = data.get("execution")
        if isinstance(exec_raw, dict):
            for key in ("evaluators", "assertions"):
                if key in exec_raw:
                    graders += graders_norm.normalise_list(exec_raw[key], root.child("execution").child(key))

        defaults = SuiteDefaults(name=name, graders=graders, execution=execution)
        defaults.graders_written = any(
            k in data for k in ("assertions", "assert", "evaluators", "evaluator")
        ) or (isinstance(exec_raw, dict) and any(k in exec_raw for k in ("evaluators", "assertions")))
        if "input" in data:
            defaults.input_raw = data["input"]
            defaults.input_node = root.child("input")
            defaults.input_messages = normalise_input(data["input"], root.child("input"), ctx)
        if "input_files" in data:
            defaults.input_files = resolve_input_files(data["input_files"], root.child("input_files"), ctx)
        metadata = self._mapping(data, "metadata", root)
        if "governance" in data:
            metadata = {**metadata, "governance": self._mapping(data, "governance", root)}
        defaults.metadata = metadata
        defaults.preprocessors = self._preprocessors(data, root)
        ctx.not_run(data, root, {"vars": "put `vars` on each test"}, "an eval file")
        from agentv_ci.loading.workspace import parse_workspace
        from agentv_ci.loading.workspace_resets import check_worktree_reset

        defaults.workspace = parse_workspace(data.get("workspace"), root.child("workspace"), ctx)
        check_worktree_reset(defaults.workspace, None, root.child("workspace"), ctx)
        prompt_md = path.parent / "PROMPT.md"
        ctx.depend(prompt_md)  # read for tests without input; adding one gives them an input
        defaults.prompt_md = prompt_md if prompt_md.is_file() else None

        builder = TestBuilder(ctx, defaults, graders_norm)
        expander = CaseExpander(ctx, lambda p, w: self._child_tests(p, w, stack))
        tests_key = next((k for k in TESTS_ALIASES if k in data), None)
        entries: Iterable[RawCase | IncludedSuite]
        if jsonl is not None:
            if tests_key is not None:
                ctx.warn("W106", "a JSONL sidecar's own `tests` are ignored", root.child(tests_key), key=True)
            entries = expander.expand(str(jsonl), root)
        elif tests_key is None:
            sibling = path.with_name(default_suite_name(path) + ".jsonl")
            ctx.depend(sibling)
            if sibling.is_file():
                entries = expander.expand(str(sibling), root)
            else:
                ctx.error(
                    "E102", "eval file has no `tests`", root, hint="add `tests:` (a list, or a path to cases)"
                )
                entries = []
        else:
            tests_raw = data[tests_key]
            if isinstance(tests_raw, list) and not tests_raw:
                ctx.error("E103", "`tests` is empty", root.child(tests_key))
            entries = expander.expand(tests_raw, root.child(tests_key))
        if not lazy:
            entries = list(entries)  # every case file read before the first test is built
        return _Prepared(path, data, root, name, execution, metadata, defaults, builder, entries)

    def _tests_of(self, prepared: _Prepared, stack: tuple[Path, ...]) -> Iterator[Built]:
        """Each test of the suite (and where its id was written) as its entry is read."""
        included = workspaced = False
        builder, execution = prepared.builder, prepared.execution
        for entry in prepared.entries:
            made_all: Sequence[Built] = ()
            if isinstance(entry, RawCase):
                made = builder.build(entry.data, entry.node, entry.run)
                made_all = [made] if made is not None else []
            else:
                included = True
                made_all = self._apply_include(entry, execution)
            for built in made_all:
                workspaced = workspaced or built[0].workspace is not None
                yield built
        if included:
            self._check_wrapper_workspace(prepared.data, prepared.root)
        if not workspaced:
            warn_hooks_without_workspace(execution, self.ctx)

    def _check(
        self, prepared: _Prepared, built: Iterator[Built], stack: tuple[Path, ...]
    ) -> list[Built] | None:
        """A `check` load's tests: checked as a `keep` load checks them, kept unless one comes from
        a JSONL dataset (then none is, and None is returned). Duplicate ids are found through 64-bit
        hashes (seen_keys); a repeated hash, or a test with `depends_on`, has the suite's tests built
        once more (quietly) to report exactly what a `keep` load reports."""
        kept: list[Built] | None = []
        seen = SeenKeys()
        recheck = False
        view = Suite(
            name=prepared.name,
            path=str(prepared.path),
            tags=_tags(prepared.data),
            execution=prepared.execution,
        )
        for test, where in built:
            if kept is not None:
                if isinstance(where, Node) and isinstance(where.doc, LineLocator):
                    kept = None  # from a dataset: nothing of this suite is held
                else:
                    kept.append((test, where))
            if seen.add(f"{test.suite}\x00{test.id}") or test.depends_on:
                recheck = True
            if self.on_test is not None:
                self.on_test(view, test)
        if kept is not None:
            check_duplicate_ids(kept, self.ctx)
            check_dependencies(kept, self.ctx)
            return kept
        self.streamed = True
        if recheck:
            self._check_exactly(prepared.path, stack)
        return None

    def _check_exactly(self, path: Path, stack: tuple[Path, ...]) -> None:
        """Duplicate ids and `depends_on` of a suite whose tests were not kept, as a `keep` load
        reports them: its tests are built again in a scratch context, held, and checked."""
        ctx = self.ctx
        scratch = LoadContext(
            ctx.repo_root, ctx.env, ctx.process_env, build_graders=False, confinement=ctx.confinement
        )
        loader = _SuiteLoader(scratch)
        prepared = loader._prepare(path, stack, None, lazy=False)
        if prepared is None:
            return
        built = list(loader._tests_of(prepared, (*stack, prepared.path)))
        checks = LoadContext(ctx.repo_root, ctx.env, ctx.process_env, confinement=ctx.confinement)
        check_duplicate_ids(built, checks)
        check_dependencies(built, checks)
        ctx.diagnostics.extend(checks.diagnostics)

    def _suite(self, prepared: _Prepared, tests: list[Test]) -> Suite:
        from agentv_ci.loading.workspace import merge_workspace

        ctx = self.ctx
        data, root = prepared.data, prepared.root
        tags = data.get("tags")
        if tags is not None and not (
            (isinstance(tags, list) and all(isinstance(t, str) for t in tags)) or isinstance(tags, dict)
        ):
            ctx.error("E101", "tags must be a list of strings", root.child("tags"))
        requires = data.get("requires")
        if requires is not None and not (
            isinstance(requires, dict) and all(isinstance(v, str) for v in requires.values())
        ):
            ctx.error(
                "E101",
                "requires must map tool names to version ranges",
                root.child("requires"),
                hint='e.g. requires: {agentv: ">=0.30.0"}',
            )
        return Suite(
            name=prepared.name,
            path=str(prepared.path),
            tests=tests,
            description=data.get("description") if isinstance(data.get("description"), str) else None,
            version=str(data["version"]) if data.get("version") is not None else None,
            metadata=prepared.metadata,
            tags=_tags(data),
            execution=prepared.execution,
            workspace=merge_workspace(prepared.defaults.workspace, None),
            preprocessors=prepared.defaults.preprocessors,
            dependencies=list(ctx.dependencies),
            location=root.loc(),
        )

    def _check_wrapper_workspace(self, data: dict[str, Any], root: Node) -> None:
        """A wrapper importing suites (`type: suite`) must not define a workspace (seed 004)."""
        places = [root.child("workspace")] if "workspace" in data else []
        for block in ("experiment", "execution"):
            if isinstance(data.get(block), dict) and "workspace" in data[block]:
                places.append(root.child(block).child("workspace"))
        for node in places:
            self.ctx.error(
                "E113",
                "a wrapper that imports suites (`type: suite`) must not define a workspace",
                node,
                key=True,
                hint="imported suites own their task environment; move the workspace into them",
            )

    def _name(self, data: dict[str, Any], root: Node, path: Path) -> str:
        for key in ("name", "suite"):
            if key in data:
                value = data[key]
                if not isinstance(value, str):
                    self.ctx.error("E101", f"{key} must be a string, got {type_name(value)}", root.child(key))
                    continue
                if key == "name" and (not NAME_PATTERN.match(value) or len(value) > 64):
                    self.ctx.error(
                        "E104",
                        f"invalid suite name {value!r}",
                        root.child(key),
                        hint="use 1-64 lowercase letters, digits and hyphens, e.g. `code-review`",
                    )
                return value
        return default_suite_name(path)

    def _mapping(self, data: dict[str, Any], key: str, root: Node) -> dict[str, Any]:
        value = data.get(key)
        if value is None:
            return _EMPTY.copy()
        if not isinstance(value, dict):
            self.ctx.error("E101", f"{key} must be a mapping, got {type_name(value)}", root.child(key))
            return _EMPTY.copy()
        return value

    def _preprocessors(self, data: dict[str, Any], root: Node) -> list[dict[str, Any]]:
        from agentv_ci.loading.preprocessors import parse_preprocessors

        if "preprocessors" not in data:
            return []
        return parse_preprocessors(data["preprocessors"], root.child("preprocessors"), self.ctx)

    def _child_tests(
        self, path: Path, where: SourceLocation, stack: tuple[Path, ...]
    ) -> list[tuple[Test, SourceLocation]]:
        resolved = safe_resolve(path)
        if resolved in stack:
            chain = " -> ".join(p.name for p in (*stack, resolved))
            self.ctx.report("E302", f"include cycle: {chain}", where)
            return []
        # An imported suite is a suite of its own: its `${{ VAR }}` come from its own `.env` chain.
        ctx = self.ctx
        saved_env, ctx.env = ctx.env, dotenv_environment(resolved.parent, ctx)
        try:
            child = self.load(resolved, stack, where)
        finally:
            ctx.env = saved_env
        if child is None:
            return []
        return [(t, t.location or where) for t in child.tests]

    def _apply_include(
        self, entry: IncludedSuite, wrapper: ExecutionSpec
    ) -> list[tuple[Test, SourceLocation]]:
        run = (
            parse_execution(entry.run, entry.run_node, self.ctx) if entry.run is not None else ExecutionSpec()
        )
        selected = _select(entry.tests, entry.select, entry.select_node, self.ctx)
        out: list[tuple[Test, SourceLocation]] = []
        for test, loc in selected:
            execution = merge_execution(wrapper, merge_execution(test.execution, run))
            out.append((msgspec.structs.replace(test, execution=execution), loc))
        return out


def _tags(data: dict[str, Any]) -> list[str]:
    tags = data.get("tags")
    return [t for t in tags if isinstance(t, str)] if isinstance(tags, list) else []


def check_duplicate_ids(built: list[Built], ctx: LoadContext) -> None:
    """E105 for every test whose suite and id repeat an earlier test's (naming where that one is)."""
    seen: dict[str, Node | SourceLocation] = {}
    for test, where in built:
        key = f"{test.suite}\x00{test.id}"
        if key in seen:
            first, here = _location(seen[key]), _location(where)
            if first.file == here.file:
                previous = f"line {first.line}"
            else:
                rel = os.path.relpath(first.file, Path(here.file).parent)
                previous = f"{rel}:{first.line}:{first.col}"
            ctx.report(
                "E105",
                f"duplicate test id {test.id!r} (first at {previous})",
                here,
                "test ids must be unique within a suite",
            )
        else:
            seen[key] = where


def _location(where: Node | SourceLocation) -> SourceLocation:
    return where.loc() if isinstance(where, Node) else where


def _select(
    tests: list[tuple[Test, SourceLocation]], select: Any, node: Node, ctx: LoadContext
) -> list[tuple[Test, SourceLocation]]:
    checked = check_select(select, node, ctx)
    if checked is None:
        return tests
    return [(t, loc) for t, loc in tests if is_selected(t.id, t.tags, t.metadata, checked)]


@contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Loading builds hundreds of thousands of long-lived, acyclic objects; pausing the cyclic GC
    stops it from rescanning them over and over (a 100k-case JSONL loads about twice as fast)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        # Move what survived into the permanent generation: re-enabling would otherwise start with one
        # collection over every object just built. Refcounting still frees them when dropped.
        gc.freeze()
        if was_enabled:
            gc.enable()


def dotenv_environment(eval_dir: Path, ctx: LoadContext) -> dict[str, str]:
    """The process env over the `.env` chain of `eval_dir`; every place a `.env` could be is a
    dependency (a new one changes the environment)."""
    candidates = dotenv_candidates(eval_dir, ctx.repo_root)
    for candidate in candidates:
        ctx.depend(candidate)
    return merge_env([c for c in candidates if c.is_file()], ctx.process_env)


def _context(
    path: Path,
    repo_root: Path | None,
    env: Mapping[str, str] | None,
    build_graders: bool,
    allow_outside: Sequence[Path],
) -> LoadContext:
    root = repo_root if repo_root is not None else find_repo_root(path.absolute().parent)
    process_env = os.environ if env is None else env
    confinement = Confinement.at(root, allow_outside)
    allow_for_plugins(allow_outside)  # plugins' own reads (agentv_ci.api.read_confined_file) too
    ctx = LoadContext(root, {}, process_env, build_graders=build_graders, confinement=confinement)
    ctx.env = dotenv_environment(path.absolute().parent, ctx)
    return ctx


def load_suite(
    path: Path,
    *,
    repo_root: Path | None = None,
    env: Mapping[str, str] | None = None,
    build_graders: bool = True,
    allow_outside: Sequence[Path] = (),
    mode: LoadMode = "keep",
    on_test: TestVisitor | None = None,
) -> LoadResult:
    """Load one eval file (or JSONL dataset). Never raises for bad input: an unreadable file gives an
    error diagnostic and `suite=None`.

    `build_graders=False` skips building each grader and checking its plugin config: fewer
    diagnostics, the same suite and the same dependencies (change-based selection loads this way).

    `mode="check"` reports the same diagnostics and dependencies (in the order they were met, which
    may differ) without keeping the tests of a JSONL dataset (`streamed`); `on_test` sees every test
    built (see `_SuiteLoader.load`).

    Every file the suite references must lie inside the repository root (E305) or one of the
    `allow_outside` directories (see `agentv_ci.security.confinement`)."""
    path = Path(path)
    ctx = _context(path, repo_root, env, build_graders, allow_outside)
    loader = _SuiteLoader(ctx, on_test)
    with _no_cyclic_gc():
        suite = loader.load(path, mode=mode)
    dependencies = list(ctx.dependencies)
    if suite is not None:
        suite.dependencies = dependencies
    diagnostics = sorted(set(ctx.diagnostics), key=sort_key)
    return LoadResult(
        suite=suite, diagnostics=diagnostics, dependencies=dependencies, streamed=loader.streamed
    )


def stream_suite_tests(
    path: Path,
    *,
    repo_root: Path | None = None,
    env: Mapping[str, str] | None = None,
    allow_outside: Sequence[Path] = (),
    problems: list[Diagnostic] | None = None,
) -> Iterator[Test]:
    """The tests of the eval file `path`, built one at a time as they are taken (a JSONL dataset is
    read line by line), for a suite a `check` load did not keep. Diagnostics were reported by that
    load; errors found now (a file edited since) are appended to `problems`."""
    path = Path(path)
    ctx = _context(path, repo_root, env, True, allow_outside)
    yield from _SuiteLoader(ctx).stream(path)
    if problems is not None:
        problems.extend(d for d in sorted(set(ctx.diagnostics), key=sort_key) if d.severity == "error")


def load_suites(
    paths: Sequence[Path],
    *,
    repo_root: Path | None = None,
    env: Mapping[str, str] | None = None,
    allow_outside: Sequence[Path] = (),
) -> tuple[list[Suite], list[Diagnostic]]:
    """Discover eval files under `paths`, load them all, collect every diagnostic."""
    suites: list[Suite] = []
    diagnostics: list[Diagnostic] = []
    for path in find_eval_files(paths):
        result = load_suite(path, repo_root=repo_root, env=env, allow_outside=allow_outside)
        if result.suite is not None:
            suites.append(result.suite)
        diagnostics.extend(result.diagnostics)
    return suites, diagnostics
