"""`SuiteReader`: one eval file read, its suite-level settings checked, and its tests built (with the
suites it imports), either kept or, in `check` mode, checked and dropped."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentv_ci.loading.cases import CaseExpander, IncludedSuite, RawCase, apply_include
from agentv_ci.loading.context import FileLocator, LineLocator, LoadContext, Node, type_name
from agentv_ci.loading.dependencies import check_dependencies
from agentv_ci.loading.discovery import jsonl_sidecar
from agentv_ci.loading.documents import parse_document, read_text
from agentv_ci.loading.duplicate_ids import Built, check_duplicate_ids
from agentv_ci.loading.interpolate import dotenv_environment
from agentv_ci.loading.keys import TESTS_ALIASES
from agentv_ci.loading.matrix_targets import warn_hooks_without_workspace
from agentv_ci.loading.paths import safe_resolve
from agentv_ci.loading.plain_tests import PlainRow, PlainTemplate
from agentv_ci.loading.seen_keys import SeenKeys
from agentv_ci.loading.suite_defaults import SuiteDefaults
from agentv_ci.loading.suite_settings import (
    check_wrapper_workspace,
    default_suite_name,
    make_suite,
    read_suite_settings,
    suite_tags,
)
from agentv_ci.loading.tests_builder import TestBuilder
from agentv_ci.model.source import SourceLocation
from agentv_ci.model.suite import Suite, Test

LoadMode = Literal["keep", "check"]
# Called with each test a `check` load builds (and the suite as far as a plan needs it: name, path,
# tags, execution); the test is dropped after.
TestVisitor = Callable[[Suite, Test], None]
# Called instead, when given, with each test built from its suite's template of plain tests, with the
# template and the test's row (what it has of its own): enough to keep the test in a few bytes.
PlainVisitor = Callable[[Suite, Test, PlainTemplate, PlainRow], None]


@dataclass
class _Prepared:
    """An eval file read and its suite-level settings checked; its tests not built yet."""

    path: Path
    data: dict[str, Any]
    root: Node
    defaults: SuiteDefaults
    builder: TestBuilder
    entries: Iterable[RawCase | IncludedSuite]


class SuiteReader:
    def __init__(
        self, ctx: LoadContext, on_test: TestVisitor | None = None, on_plain: PlainVisitor | None = None
    ) -> None:
        self.ctx = ctx
        self.on_test = on_test
        self.on_plain = on_plain
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
        (then they are kept, as in `keep`): a dataset of any size costs no memory."""
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
        tests = [t for t, _ in kept] if kept is not None else []
        return make_suite(prepared.path, prepared.data, prepared.root, prepared.defaults, tests, self.ctx)

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
        defaults, graders_norm = read_suite_settings(path, data, root, ctx)
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
        return _Prepared(path, data, root, defaults, builder, entries)

    def _tests_of(self, prepared: _Prepared, stack: tuple[Path, ...]) -> Iterator[Built]:
        """Each test of the suite (and where its id was written) as its entry is read."""
        included = workspaced = False
        builder, execution = prepared.builder, prepared.defaults.execution
        for entry in prepared.entries:
            if isinstance(entry, RawCase):  # one test (the common case: no list of one)
                made = builder.build(entry.data, entry.node, entry.run)
                if made is not None:
                    workspaced = workspaced or made[0].workspace is not None
                    yield made
                continue
            included = True
            for built in apply_include(entry, execution, self.ctx):
                workspaced = workspaced or built[0].workspace is not None
                yield built
        if included:
            check_wrapper_workspace(prepared.data, prepared.root, self.ctx)
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
            name=prepared.defaults.name,
            path=str(prepared.path),
            tags=suite_tags(prepared.data),
            execution=prepared.defaults.execution,
        )
        on_test, on_plain, plain = self.on_test, self.on_plain, prepared.builder.plain
        seen_before, row_of = seen.add, plain.row_of
        for test, where in built:
            if kept is not None:
                if isinstance(where, Node) and isinstance(where.doc, LineLocator):
                    kept = None  # from a dataset: nothing of this suite is held
                else:
                    kept.append((test, where))
            if seen_before(f"{test.suite}\x00{test.id}") or test.depends_on:
                recheck = True
            if on_plain is not None and (row := row_of(test)) is not None:
                on_plain(view, test, plain, row)
            elif on_test is not None:
                on_test(view, test)
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
        loader = SuiteReader(scratch)
        prepared = loader._prepare(path, stack, None, lazy=False)
        if prepared is None:
            return
        built = list(loader._tests_of(prepared, (*stack, prepared.path)))
        checks = LoadContext(ctx.repo_root, ctx.env, ctx.process_env, confinement=ctx.confinement)
        check_duplicate_ids(built, checks)
        check_dependencies(built, checks)
        ctx.diagnostics.extend(checks.diagnostics)

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
