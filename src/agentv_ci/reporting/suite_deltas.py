"""How a suite's delta vs the baseline is worded.

A suite delta is the mean over its *matched* tests: the same test, with the same definition, that
ran conclusively on both sides. So the wording says over how many of the suite's tests it was
taken (`-0.125 over 3 of 4 tests`), is `n/a` when none could be compared (never `+0.000`), and the
tests left out of it (definition changed, new, removed) are listed with their old and new scores:
a suite whose only test changed definition reads `n/a`, then `1 test changed definition: suite/t
[target] old 1.000 -> new 0.875`.
"""

from __future__ import annotations

from agentv_ci.compare import Comparison, SuiteComparison, TestComparison

__all__ = ["LEFT_OUT", "delta_text", "left_out_of", "left_out_text", "suite_size"]

LEFT_OUT = ("changed", "new", "removed")
_HEADINGS = {"changed": "changed definition", "new": "new", "removed": "removed"}
_NAMED = 5  # tests named per kind and suite; the rest are counted


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _tests(n: int) -> str:
    return f"{n} test" if n == 1 else f"{n} tests"


def suite_size(stats: SuiteComparison) -> int:
    """The suite's tests in the new run (every compared row but the `removed` ones)."""
    return sum(n for status, n in stats.counts.items() if status != "removed")


def delta_text(stats: SuiteComparison) -> str:
    """`-0.125 [-0.297, +0.047] over 3 of 4 tests` (the interval at the level of the run's corrected
    family; `± se` where there is none), or `n/a (0 of 1 tests comparable)`."""
    total = suite_size(stats)
    if stats.mean_delta is None or stats.matched == 0:
        return f"n/a (0 of {_tests(total)} comparable)"
    if stats.ci is not None:  # the interval says more than the standard error it comes from
        spread = f" [{stats.ci[0]:+.3f}, {stats.ci[1]:+.3f}]"
    else:
        spread = f" ± {stats.stderr:.3f}" if stats.stderr is not None else ""
    return f"{round(stats.mean_delta, 3) + 0.0:+.3f}{spread} over {stats.matched} of {_tests(total)}"


def left_out_of(comparison: Comparison, suite: str) -> list[TestComparison]:
    """The tests of `suite` that count as changed (definition changed, new, removed), in order."""
    return [t for t in comparison.tests if t.suite == suite and t.status in LEFT_OUT]


def _one(test: TestComparison) -> str:
    if test.status == "new":
        return f"{test.label} new {_score(test.head_score)}"
    if test.status == "removed":
        return f"{test.label} old {_score(test.base_score)}"
    return f"{test.label} old {_score(test.base_score)} -> new {_score(test.head_score)}"


def left_out_text(tests: list[TestComparison]) -> str:
    """`1 test changed definition: s/t [m] old 1.000 -> new 0.875; 2 new: ...; 1 removed: ...` ("" for
    none; a score of `-`: that side did not run conclusively)."""
    parts = []
    for status in LEFT_OUT:
        rows = [t for t in tests if t.status == status]
        if not rows:
            continue
        named = ", ".join(_one(t) for t in rows[:_NAMED])
        more = f", +{len(rows) - _NAMED} more" if len(rows) > _NAMED else ""
        count = _tests(len(rows)) if status == "changed" else str(len(rows))
        parts.append(f"{count} {_HEADINGS[status]}: {named}{more}")
    return "; ".join(parts)
