"""Everything the gates, `summary.json`, the console and the Markdown summary need from a run's
results, gathered in one pass and in bounded memory: totals overall and per suite, how many tests
failed, errored or did not run (with the first few of each, as the gates name them), and the few
worst results the console and the Markdown details show.

A run feeds its tally as each row is written (`ResultsWriter(tally=...)`), so nothing has to be read
back or held for these; `tally_of` gives the tally of any results (computing it in one pass unless
the results carry theirs, as `StoredResults` do).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

from agentv_ci.model.result import TestResult
from agentv_ci.results.needs_secret import SecretNeeds
from agentv_ci.results.totals import Totals, TotalsBuilder, outcome_of

__all__ = ["FirstFew", "ResultsTally", "Smallest", "tally_of"]

NAMED = 5  # results a gate reason names before "..."
CONSOLE_LISTED = 10  # failing tests the console lists
WORST_SHOWN = 20  # failing tests the Markdown details show

T = TypeVar("T")


class FirstFew(Generic[T]):
    """How many items were seen, and the first `keep` of them."""

    __slots__ = ("count", "items", "keep")

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.count = 0
        self.items: list[T] = []

    def add(self, item: T) -> None:
        self.count += 1
        if len(self.items) < self.keep:
            self.items.append(item)


class Smallest(Generic[T]):
    """The `keep` smallest items by `key`, in order, as `sorted(items, key=key)[:keep]` would give
    them (ties in the order they were added), plus how many were added. Memory: 2 * keep items."""

    __slots__ = ("_items", "_sorted", "count", "keep", "key")

    def __init__(self, keep: int, key: Callable[[T], Any]) -> None:
        self.keep = keep
        self.key = key
        self.count = 0
        self._items: list[T] = []
        self._sorted = True

    def add(self, item: T) -> None:
        self.count += 1
        self._items.append(item)
        self._sorted = False
        if len(self._items) >= 2 * self.keep + 16:
            self._compact()

    def _compact(self) -> None:
        # Kept items precede newer ones and the sort is stable: ties keep the order of arrival.
        self._items = sorted(self._items, key=self.key)[: self.keep]
        self._sorted = True

    @property
    def items(self) -> list[T]:
        if not self._sorted:
            self._compact()
        return list(self._items)


def _label(result: TestResult) -> str:
    return f"{result.suite}/{result.test_id} [{result.target}]"


def _console_key(result: TestResult) -> tuple[str, str, str]:
    return (result.suite, result.test_id, result.target)


def _worst_key(result: TestResult) -> tuple[bool, float, str, str, str]:
    return (outcome_of(result) == "error", result.score, result.suite, result.test_id, result.target)


class ResultsTally:
    """The figures of a group of results, fed one at a time with `add`.

    `threshold` re-judges conclusive results from their score for the totals and the `failing`
    sample, as `--threshold` does in the gates (None: keep each result's verdict).
    """

    def __init__(self, threshold: float | None = None) -> None:
        self.threshold = threshold
        self.results = 0
        self.dry_run = False  # any result is a dry run's placeholder
        self.not_run_status = 0  # results whose execution_status is `not_run`
        self.needs_secret = SecretNeeds()  # of those, the tests a fork's PR had no key for
        self._overall = TotalsBuilder("overall", threshold)
        self._suites: dict[str, TotalsBuilder] = {}
        # Labels of the first results of each kind, in the order they were added (the gates name them).
        self.failing: FirstFew[str] = FirstFew(NAMED)  # outcome (under `threshold`) == failed
        self.errored: FirstFew[str] = FirstFew(NAMED)  # outcome == error
        self.skipped: FirstFew[str] = FirstFew(NAMED)  # outcome == not_run
        # What the console lists (failed or errored; errored alone for a dry run) and the worst tests
        # the Markdown summary details, each bounded.
        self._console_bad: Smallest[TestResult] = Smallest(CONSOLE_LISTED, _console_key)
        self._console_errors: Smallest[TestResult] = Smallest(CONSOLE_LISTED, _console_key)
        self._worst: Smallest[TestResult] = Smallest(WORST_SHOWN, _worst_key)

    def add(self, result: TestResult) -> None:
        self.results += 1
        if result.dry_run:
            self.dry_run = True
        if result.execution_status == "not_run":
            self.not_run_status += 1
            self.needs_secret.add(result)
        threshold = self.threshold
        judged = self._overall.add(result)
        suite = self._suites.get(result.suite)
        if suite is None:
            suite = self._suites[result.suite] = TotalsBuilder(result.suite, threshold)
        suite.add(result, judged)
        outcome = judged if threshold is None else outcome_of(result)
        if judged == "failed":
            self.failing.add(_label(result))
        if outcome == "error":
            self.errored.add(_label(result))
            self._console_errors.add(result)
            self._console_bad.add(result)
            self._worst.add(result)
        elif outcome == "failed":
            self._console_bad.add(result)
            self._worst.add(result)
        elif outcome == "not_run":
            self.skipped.add(_label(result))

    def add_all(self, results: Iterable[TestResult]) -> ResultsTally:
        for result in results:
            self.add(result)
        return self

    # ------------------------------------------------------------------ figures
    def overall(self) -> Totals:
        """`totals_of(results, threshold=...)`."""
        return self._overall.build()

    def by_suite(self) -> list[Totals]:
        """`totals_by_suite(results, threshold=...)`."""
        return [self._suites[name].build() for name in sorted(self._suites)]

    def console_listed(self, *, errors_only: bool) -> tuple[list[TestResult], int]:
        """The first failing (or, with `errors_only`, errored) results by suite, test id and target,
        and how many there are in all."""
        chosen = self._console_errors if errors_only else self._console_bad
        return chosen.items, chosen.count

    def worst(self) -> tuple[list[TestResult], int]:
        """The worst failing or errored results (errors last, lowest score first) and their count."""
        return self._worst.items, self._worst.count


def tally_of(results: Iterable[TestResult], threshold: float | None = None) -> ResultsTally:
    """The tally of `results`: their own when they keep one (a run's `StoredResults`), else one
    pass over them."""
    own: Callable[[float | None], ResultsTally] | None = getattr(results, "tally", None)
    if own is not None:
        return own(threshold)
    return ResultsTally(threshold).add_all(results)
