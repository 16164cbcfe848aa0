"""The matrix of a run: which targets a test runs against, and the count of tests x targets that
`validate` and `run` hold to `MAX_JOBS` alike (model/bounds.py)."""

from __future__ import annotations

from collections.abc import Sequence

from agentv_ci.model.bounds import MAX_JOBS
from agentv_ci.model.suite import Suite, Test

DEFAULT_TARGET = "default"


def targets_for(test: Test, suite: Suite, cli_targets: Sequence[str]) -> list[str]:
    """--target > test `execution.targets`/`target` > suite `execution.targets`/`target` > "default"."""
    if cli_targets:
        return list(dict.fromkeys(cli_targets))
    for execution in (test.execution, suite.execution):
        if execution.targets:
            return list(dict.fromkeys(execution.targets))
        if execution.target:
            return [execution.target]
    return [DEFAULT_TARGET]


class MatrixCount:
    """Tests x targets of every eval file of one run (before any selection), counted one test at a
    time as the files are read: nothing is held per test."""

    def __init__(self) -> None:
        self.jobs = 0
        self.over = False

    def add(self, targets: int) -> str | None:
        """Count one test run against `targets` targets; the error message the first time the
        count passes `MAX_JOBS` (then None again: one error per run)."""
        self.jobs += targets
        if self.jobs <= MAX_JOBS or self.over:
            return None
        self.over = True
        return f"this test takes the run past {MAX_JOBS:,} tests x targets (the bound on the matrix of a run)"


MATRIX_HINT = "split the dataset into eval files run by separate commands, or run fewer targets"

__all__ = ["DEFAULT_TARGET", "MATRIX_HINT", "MatrixCount", "targets_for"]
