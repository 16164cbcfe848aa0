"""The run against its baseline: each test's change (`-1.000 broken`, `new`, `definition changed`),
the section listing every test that is not unchanged (removed ones included: they have no row in
the run), and a suite's mean delta as the PR comment writes it."""

from __future__ import annotations

from html import escape

from agentv_ci.api import Comparison, SuiteComparison, TestComparison
from agentv_ci_html_report.figures import score, signed

# Statuses whose score move is no comparison: said in words, never as a delta.
_WORDS = {
    "new": "new",
    "removed": "removed",
    "changed": "definition changed",
    "not comparable": "not comparable",
    "incomparable": "incomparable",
}
# Worst first, as the comment lists them; statuses this plugin does not know go last.
_ORDER = (
    "broken",
    "regressed",
    "possible regression",
    "not comparable",
    "incomparable",
    "changed",
    "new",
    "removed",
    "fixed",
    "improved",
    "possible improvement",
)
_RANK = {status: index for index, status in enumerate(_ORDER)}
_WORSE = ("broken", "regressed", "possible regression")
_BETTER = ("fixed", "improved", "possible improvement")

Key = tuple[str, str, str]


def status_name(row: TestComparison) -> str:
    return _WORDS.get(row.status, row.status)


def change_text(row: TestComparison) -> str:
    """`+0.000`, `-1.000 broken`, or the status alone where a delta would mislead."""
    if row.status in _WORDS or row.delta is None:
        return status_name(row)
    delta = signed(row.delta)
    return delta if row.status == "unchanged" else f"{delta} {row.status}"


def change_class(row: TestComparison) -> str:
    """The CSS class of a change: worse, better, or other (new, removed, changed...)."""
    return "worse" if row.status in _WORSE else "better" if row.status in _BETTER else "other"


def rows_by_key(comparison: Comparison | None) -> dict[Key, TestComparison]:
    if comparison is None:
        return {}
    return {(row.suite, row.test_id, row.target): row for row in comparison.tests}


def suite_delta(stats: SuiteComparison | None) -> str:
    """`-0.125 [-0.297, +0.047] over 3 of 4 tests` (interval at the corrected family's level, else
    `± se`), or `n/a (0 of 1 tests comparable)`: the comment's wording."""
    if stats is None:
        return "–"
    total = sum(n for status, n in stats.counts.items() if status != "removed")
    tests = f"{total} test" if total == 1 else f"{total} tests"
    if stats.mean_delta is None or stats.matched == 0:
        return f"n/a (0 of {tests} comparable)"
    if stats.ci is not None:
        spread = f" [{stats.ci[0]:+.3f}, {stats.ci[1]:+.3f}]"
    else:
        spread = f" ± {stats.stderr:.3f}" if stats.stderr is not None else ""
    return f"{signed(stats.mean_delta)}{spread} over {stats.matched} of {tests}"


def _counts(comparison: Comparison) -> str:
    counts: dict[str, int] = {}
    for row in comparison.tests:
        counts[row.status] = counts.get(row.status, 0) + 1
    ordered = sorted(counts, key=lambda s: _RANK.get(s, len(_ORDER) + (s == "unchanged")))
    return " · ".join(f"{counts[s]} {_WORDS.get(s, s)}" for s in ordered)


def changes_section(comparison: Comparison) -> str:
    """`<section id="changes">`: the counts by status, then every test that is not unchanged, worst
    first, with base and head scores, Δ and the evidence (pass counts, corrected p, interval)."""
    changed = sorted(
        (row for row in comparison.tests if row.status != "unchanged"),
        key=lambda r: (_RANK.get(r.status, len(_ORDER)), r.delta or 0.0, r.suite, r.test_id, r.target),
    )
    rows = "".join(
        f'<tr class="{change_class(row)}"><td>{escape(status_name(row))}</td><td>{escape(row.suite)}</td>'
        f"<td>{escape(row.test_id)}</td><td>{escape(row.target)}</td>"
        f'<td class="num">{score(row.base_score)}</td><td class="num">{score(row.head_score)}</td>'
        f'<td class="num">{"–" if row.delta is None or row.status in _WORDS else signed(row.delta)}</td>'
        f"<td>{escape(row.describe())}</td></tr>"
        for row in changed
    )
    table = (
        "<table><thead><tr><th>Status</th><th>Suite</th><th>Test</th><th>Target</th><th>Base</th>"
        f"<th>Head</th><th>Δ</th><th>Evidence</th></tr></thead><tbody>{rows}</tbody></table>"
        if changed
        else '<p class="empty">No test changed beyond noise.</p>'
    )
    return (
        '<section id="changes"><h2>Changes vs baseline</h2>'
        f'<p class="meta">{escape(_counts(comparison))}</p>{table}</section>'
    )
