"""Validate eval files: load every file under the given paths and collect all diagnostics."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from agentv_ci.model.codes import STRICT_PROMOTED
from agentv_ci.model.diagnostics import Diagnostic, sort_key
from agentv_ci.model.matrix import MATRIX_HINT, MatrixCount, targets_for
from agentv_ci.model.source import SourceLocation
from agentv_ci.model.suite import Suite, Test
from agentv_ci.validation.diagnostics import at_test, merge_repeated


class ValidationReport(msgspec.Struct):
    """The files checked and every problem found in them (after `--strict` promotion)."""

    files: list[str]
    diagnostics: list[Diagnostic]
    tests: int = 0

    @property
    def errors(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for d in self.diagnostics if d.severity == "warning")


def apply_strict(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Unknown keys (and unknown grader config keys) become errors."""
    return [
        msgspec.structs.replace(d, severity="error")
        if d.code in STRICT_PROMOTED and d.severity == "warning"
        else d
        for d in diagnostics
    ]


def validate_paths(
    paths: Sequence[Path],
    *,
    strict: bool = False,
    repo_root: Path | None = None,
    env: Mapping[str, str] | None = None,
    check_targets: bool = True,
    allow_outside: Sequence[Path] = (),
    targets_file: Path | None = None,
    cli_targets: Sequence[str] = (),
    skip_non_eval: bool = False,
) -> ValidationReport:
    """Every diagnostic of every eval file under `paths` and, with `check_targets`, of the targets
    files they use (found as `run` finds them, or `targets_file`) and of the targets each suite names
    (or `cli_targets` in their place, as `run --target`); sorted, deduplicated, `--strict` applied.
    A targets file among `paths` is checked with the eval files that read it (`named_files`);
    `skip_non_eval` drops named files a directory scan would not pick up (the pre-commit hook)."""
    # lazy: discovery, the suite loader (YAML, msgspec) and the file checks, only when `validate_paths` runs
    from agentv_ci.loading.discovery import find_eval_files
    from agentv_ci.loading.suite_loader import load_suite
    from agentv_ci.loading.suite_names import SuiteNames
    from agentv_ci.validation.named_files import eval_files_reading, split_named_paths
    from agentv_ci.validation.quarantine_check import check_quarantine_files, is_quarantine_file
    from agentv_ci.validation.sandbox_check import ReadOnlyCodex, read_only_edit_warnings
    from agentv_ci.validation.targets_check import TargetChecker, check_targets_file

    quarantines, quarantine_problems = check_quarantine_files(paths, repo_root)
    paths = [path for path in paths if not is_quarantine_file(path)]
    scanned, named_targets = split_named_paths(paths, skip_non_eval=skip_non_eval)
    files = find_eval_files(scanned) if scanned else []
    lone_targets: list[Path] = []  # no eval file reads them: checked whole, below
    for targets_path in named_targets:
        readers = eval_files_reading(targets_path)
        files = sorted({*files, *readers}) if readers else files
        # The hook passes every staged YAML file: a `targets.yaml` outside `.agentv/` that no eval
        # file reads is taken for another tool's file, not checked as ours.
        if not readers and (not skip_non_eval or targets_path.parent.name == ".agentv"):
            lone_targets.append(targets_path.absolute())
    diagnostics: list[Diagnostic] = []
    tests = 0
    targets = TargetChecker(targets_file=targets_file, env=env, cli_targets=cli_targets)
    matrix = MatrixCount()  # tests x targets of all the files, as `run` counts them
    suite_names = SuiteNames()  # one eval file per suite name (E116), as `run` checks them
    read_only_codex = ReadOnlyCodex()  # each target resolved once, not once per test
    for path in files:
        # Tests are checked one at a time and not held (a dataset of any size costs no memory).
        used: dict[str, SourceLocation | None] = {}
        built = [0]
        # The suite and test execution fields (target, targets, target_location) of the test before,
        # its target names and its targets file when it has a Codex target: a dataset's tests all
        # share their suite's, and noting the same targets again changes nothing.
        last: list[Any] = [None] * 6

        def visit(
            suite: Suite,
            test: Test,
            used: dict[str, SourceLocation | None] = used,
            built: list[int] = built,
            last: list[Any] = last,
        ) -> None:
            built[0] += 1
            suite_names.note(suite, test)
            execution = test.execution
            if (
                suite is last[0]
                and execution.target is last[1]
                and execution.targets is last[2]
                and execution.target_location is last[3]
            ):
                names, codex = last[4], last[5]
            else:
                names = targets_for(test, suite, cli_targets)
                codex = None
                if check_targets:
                    targets.note(suite, test, used)
                    config = targets.config_of(suite)
                    if config is not None and not read_only_codex.none_in(config):
                        codex = config
                last[:] = [
                    suite,
                    execution.target,
                    execution.targets,
                    execution.target_location,
                    names,
                    codex,
                ]
            over = matrix.add(len(names))
            if over is not None:
                diagnostics.append(at_test("E115", over, test, suite, MATRIX_HINT))
            if codex is not None:
                diagnostics.extend(read_only_edit_warnings(test, suite, names, codex, read_only_codex))

        result = load_suite(
            path, repo_root=repo_root, env=env, allow_outside=allow_outside, mode="check", on_test=visit
        )
        diagnostics.extend(result.diagnostics)
        if result.suite is not None:
            tests += built[0]
            if check_targets:
                diagnostics.extend(targets.check(result.suite, used))
    diagnostics.extend(suite_names.diagnostics())
    if check_targets:
        # lazy: `validation.targets_check` loaded only when `validate_paths` runs
        from agentv_ci.validation.targets_check import targets_files_of

        for path in targets_files_of(files, explicit=targets_file):
            diagnostics.extend(check_targets_file(path, env, used=targets.used.get(path, set())))
    for path in lone_targets:
        diagnostics.extend(check_targets_file(path, env))
    diagnostics.extend(quarantine_problems)
    unique = merge_repeated(sorted(set(diagnostics), key=sort_key))
    if strict:
        unique = apply_strict(unique)
    checked = [*files, *lone_targets, *quarantines]
    return ValidationReport(files=[str(f) for f in checked], diagnostics=unique, tests=tests)
