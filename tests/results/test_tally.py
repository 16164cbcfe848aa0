"""The run's tally (results/tally.py): the figures of a list of results, gathered one result at a
time in bounded memory, equal the figures computed over the whole list."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from agentv_ci.model.result import TestResult
from agentv_ci.results.tally import ResultsTally, Smallest
from agentv_ci.results.totals import FloatSum, outcome_of, totals_by_suite, totals_of
from tests.properties import property_settings
from tests.reporting.golden import FAKE_REPO
from tests.reporting.sample_runs import sample_results

FAST = property_settings(200)

_FLOATS = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12)


@FAST
@given(st.lists(st.one_of(_FLOATS, st.sampled_from([0.1, 0.2, 0.3, 1e16, -1e16, 1.0, 0.0, -0.0]))))
def test_running_sum_is_the_builtin_sum_bit_for_bit(values: list[float]) -> None:
    running = FloatSum()
    for value in values:
        running.add(value)
    expected = sum(values)
    assert running.value == expected and math.copysign(1, running.value) == math.copysign(1, expected)


@FAST
@given(st.lists(st.tuples(st.integers(0, 5), st.integers()), max_size=300), st.integers(1, 12))
def test_smallest_keeps_what_a_stable_sort_would_keep(items: list[tuple[int, int]], keep: int) -> None:
    smallest: Smallest[tuple[int, int]] = Smallest(keep, key=lambda item: item[0])
    for item in items:
        smallest.add(item)
    assert smallest.items == sorted(items, key=lambda item: item[0])[:keep]  # ties in arrival order
    assert smallest.count == len(items)


def _rows() -> list[TestResult]:
    rows = sample_results(FAKE_REPO)
    # enough failures that the bounded lists have to drop some, with ties on every sort key
    return rows * 9


def test_tally_figures_equal_the_figures_of_the_whole_list() -> None:
    rows = _rows()
    for threshold in (None, 0.5):
        tally = ResultsTally(threshold).add_all(rows)
        assert tally.overall() == totals_of(rows, threshold=threshold)
        assert tally.by_suite() == totals_by_suite(rows, threshold=threshold)
        failing = [r for r in rows if outcome_of(r, threshold) == "failed"]
        assert tally.failing.count == len(failing)
        assert tally.failing.items == [f"{r.suite}/{r.test_id} [{r.target}]" for r in failing[:5]]
    tally = ResultsTally().add_all(rows)
    bad = [r for r in rows if outcome_of(r) in ("failed", "error")]
    key = lambda r: (r.suite, r.test_id, r.target)  # noqa: E731
    assert tally.console_listed(errors_only=False) == (sorted(bad, key=key)[:10], len(bad))
    errors = [r for r in rows if outcome_of(r) == "error"]
    assert tally.console_listed(errors_only=True) == (sorted(errors, key=key)[:10], len(errors))
    worst_key = lambda r: (outcome_of(r) == "error", r.score, r.suite, r.test_id, r.target)  # noqa: E731
    assert tally.worst() == (sorted(bad, key=worst_key)[:20], len(bad))
    assert tally.not_run_status == sum(1 for r in rows if r.execution_status == "not_run")
    assert tally.results == len(rows)
