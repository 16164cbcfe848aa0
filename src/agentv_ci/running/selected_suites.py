"""The eval files a run selected, loaded: every test built and checked before anything runs (bad
input is one `InvalidEvalFiles` naming every error), suite names unique (E116), warnings rendered as
`validate` renders them. For a run (`check_selected_suites`) a JSONL dataset's tests are spooled as
they are built, not held, and the run takes them back from the spool."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentv_ci.errors import InvalidEvalFiles
from agentv_ci.loading.discovery import check_paths_exist, find_eval_files
from agentv_ci.model.suite import Suite, Test
from agentv_ci.running.spooled_tests import SpooledTests

if TYPE_CHECKING:
    from agentv_ci.loading.plain_tests import PlainRow, PlainTemplate
    from agentv_ci.loading.suite_reader import LoadMode
    from agentv_ci.model.diagnostics import Diagnostic


@dataclass
class LoadedSuite:
    """A suite checked for the run. With a `spool`, its tests (read from a JSONL dataset) are not held
    in memory: `tests()` takes them back from the spool (the first reading's built tests, encoded in
    a temporary file), so the dataset is read once."""

    suite: Suite
    spool: SpooledTests | None = None

    def tests(self) -> Iterable[Test]:
        return self.suite.tests if self.spool is None else self.spool

    def close(self) -> None:
        if self.spool is not None:
            self.spool.close()


def load_selected_suites(
    paths: Sequence[Path],
    env: Mapping[str, str] | None,
    warnings: list[str] | None = None,
    allow_outside: Sequence[Path] = (),
) -> list[Suite]:
    """Load every eval file under `paths`, with its tests; any error diagnostic is an
    `InvalidEvalFiles` listing all of them. Warning diagnostics (deprecated forms, unknown keys) are
    rendered into `warnings`. Paths are shown as `validate` shows them (relative to the working
    directory when below it)."""
    return [loaded.suite for loaded in _load(paths, env, warnings, allow_outside, "keep", None)]


def check_selected_suites(
    paths: Sequence[Path],
    env: Mapping[str, str] | None,
    warnings: list[str] | None = None,
    allow_outside: Sequence[Path] = (),
    on_test: Callable[[Suite, Test], None] | None = None,
) -> list[LoadedSuite]:
    """`load_selected_suites` for a run: every test is built, checked and handed to `on_test`, but
    the tests of a JSONL dataset are not held: they are spooled as they are built, and the run takes
    them back from the spool (`LoadedSuite.spool`: the dataset is read once)."""
    return _load(paths, env, warnings, allow_outside, "check", on_test)


def _load(
    paths: Sequence[Path],
    env: Mapping[str, str] | None,
    warnings: list[str] | None,
    allow_outside: Sequence[Path],
    mode: LoadMode,
    on_test: Callable[[Suite, Test], None] | None,
) -> list[LoadedSuite]:
    # lazy: the suite loader (YAML, msgspec) and diagnostics, only when `_load` runs
    from agentv_ci.loading.suite_loader import load_suite
    from agentv_ci.loading.suite_names import SuiteNames
    from agentv_ci.validation.diagnostics import merge_repeated
    from agentv_ci.validation.output_formats import render_relative

    check_paths_exist(paths)
    loaded: list[LoadedSuite] = []
    diagnostics: list[Diagnostic] = []
    names = SuiteNames()  # one eval file per suite name: test keys are unique (E116)
    spool: SpooledTests | None = None

    def visit(suite: Suite, test: Test) -> None:
        names.note(suite, test)
        if on_test is not None:
            on_test(suite, test)
        if spool is not None:
            spool.add(test)

    noted: PlainTemplate | None = None  # its tests' suite name is noted: they all have its name

    def visit_plain(suite: Suite, test: Test, template: PlainTemplate, row: PlainRow) -> None:
        nonlocal noted
        if template is not noted:
            names.note(suite, test)
            noted = template
        if on_test is not None:
            on_test(suite, test)
        if spool is not None:
            spool.add_plain(test, template, row)  # its row alone: the template builds it again

    for path in find_eval_files(list(paths)):
        spool = SpooledTests() if mode == "check" else None
        result = load_suite(
            path, env=env, allow_outside=allow_outside, mode=mode, on_test=visit, on_plain=visit_plain
        )
        if spool is not None and not (result.suite is not None and result.streamed):
            spool.close()  # its tests are held by the suite (or it has none)
            spool = None
        if result.suite is not None:
            loaded.append(LoadedSuite(result.suite, spool))
            if mode == "keep":  # a `keep` load hands no test to `on_test`
                for test in result.suite.tests:
                    names.note(result.suite, test)
        diagnostics.extend(result.diagnostics)
    diagnostics = merge_repeated([*diagnostics, *names.diagnostics()])
    errors = [d for d in diagnostics if d.severity == "error"]
    if warnings is not None:
        warnings.extend(render_relative(d) for d in diagnostics if d.severity == "warning")
    if errors:
        for source in loaded:
            source.close()
        raise InvalidEvalFiles([render_relative(d) for d in errors])
    return loaded
