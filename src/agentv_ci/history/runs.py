"""History runs read from results files or run directories, one run at a time (oldest first)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from agentv_ci.errors import UsageError
from agentv_ci.model.result import TestResult
from agentv_ci.model.source import SourceLocation
from agentv_ci.results.results_file import aggregate_attempts, index_path, read_results, summary_facts

__all__ = ["read_history"]


def read_history(paths: Sequence[Path]) -> Iterator[list[TestResult]]:
    """Each run's rows, attempts merged, in the order of `paths`. A missing or bad file raises
    `LoadError` at file:line; a run given twice or a dry run (placeholder answers) is bad input."""
    seen: set[Path] = set()
    for path in paths:
        index = index_path(path)  # LoadError when there is none
        where = SourceLocation(str(index))
        resolved = index.resolve()
        if resolved in seen:
            raise UsageError("this run is given twice: it would count twice", location=where)
        seen.add(resolved)
        rows = read_results(index)
        if summary_facts(index.parent).get("dry_run") is True or any(r.dry_run for r in rows):
            raise UsageError(
                "a dry run: its answers are placeholders, not history",
                location=where,
                hint="give the results of runs that called the targets",
            )
        yield aggregate_attempts(rows)
