"""`load_suite` / `load_suites`: one eval file (or JSONL dataset with its sidecar) -> `Suite`.

Never raises for bad user input: every problem becomes a `Diagnostic`.

A run (and `validate`) loads in `check` mode: every test is built and checked, but the tests of a
suite that reads a JSONL dataset are not kept: `on_test` sees each as it is built (the run spools
them, running/spooled_tests.py). However large a dataset, it is never held in memory. (The reading
itself is `suite_reader.SuiteReader`.)
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import msgspec

from agentv_ci.loading.context import LoadContext
from agentv_ci.loading.discovery import find_eval_files
from agentv_ci.loading.interpolate import dotenv_environment
from agentv_ci.loading.suite_reader import LoadMode, PlainVisitor, SuiteReader, TestVisitor
from agentv_ci.model.diagnostics import Diagnostic, sort_key
from agentv_ci.model.suite import Suite
from agentv_ci.security.confinement import Confinement, find_repo_root
from agentv_ci.security.file_reads import allow_for_plugins


class LoadResult(msgspec.Struct):
    """A suite (None when the file could not be read or parsed), every diagnostic found, and every file
    the load read or looked for (absolute paths; directories for case dirs and globs): the suite's
    `dependencies`, kept here too for a file that failed to load."""

    suite: Suite | None
    diagnostics: list[Diagnostic]
    dependencies: list[str] = []
    # A `check` load did not keep the tests (they come from a JSONL dataset): `suite.tests` is empty
    # and only `on_test` saw them.
    streamed: bool = False

    @property
    def ok(self) -> bool:
        return self.suite is not None and not any(d.severity == "error" for d in self.diagnostics)


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
    on_plain: PlainVisitor | None = None,
) -> LoadResult:
    """Load one eval file (or JSONL dataset). Never raises for bad input: an unreadable file gives an
    error diagnostic and `suite=None`.

    `build_graders=False` skips building each grader and checking its plugin config: fewer
    diagnostics, the same suite and the same dependencies (change-based selection loads this way).

    `mode="check"` reports the same diagnostics and dependencies (in the order they were met, which
    may differ) without keeping the tests of a JSONL dataset (`streamed`); `on_test` sees every test
    built (see `SuiteReader.load`), or `on_plain`, when given, each test built from its suite's
    template of plain tests (loading/plain_tests.py).

    Every file the suite references must lie inside the repository root (E305) or one of the
    `allow_outside` directories (see `agentv_ci.security.confinement`)."""
    path = Path(path)
    ctx = _context(path, repo_root, env, build_graders, allow_outside)
    loader = SuiteReader(ctx, on_test, on_plain)
    with _no_cyclic_gc():
        suite = loader.load(path, mode=mode)
    dependencies = list(ctx.dependencies)
    if suite is not None:
        suite.dependencies = dependencies
    diagnostics = sorted(set(ctx.diagnostics), key=sort_key)
    return LoadResult(
        suite=suite, diagnostics=diagnostics, dependencies=dependencies, streamed=loader.streamed
    )


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
