"""Several targets side by side: tests down, targets across, each cell the test's score on that
target and its change vs the baseline; the table's foot has each target's pass rate, mean score,
cost and tokens."""

from __future__ import annotations

from html import escape

from agentv_ci.api import TestComparison, TestResult, outcome_of, totals_of
from agentv_ci_html_report.changes import Key, change_class, change_text
from agentv_ci_html_report.figures import NONE, rate, score, tokens, usd


def targets_of(results: list[TestResult], changes: dict[Key, TestComparison]) -> list[str]:
    """Every target of the run and of its baseline (a target dropped since still has a column)."""
    return sorted({r.target for r in results} | {key[2] for key in changes})


def _cell(result: TestResult | None, change: TestComparison | None) -> str:
    if result is None and change is not None and change.status == "removed":
        removed = f"removed (base {score(change.base_score)})"
        return f'<td class="removed">{NONE} <span class="change other">{removed}</span></td>'
    if result is None:
        return f'<td class="empty">{NONE}</td>'
    outcome = outcome_of(result)
    delta = (
        ""
        if change is None
        else f' <span class="change {change_class(change)}">{escape(change_text(change))}</span>'
    )
    return f'<td class="cell {outcome}"><span class="score">{score(result.score)}</span>{delta}</td>'


def _foot(results: list[TestResult], targets: list[str]) -> str:
    totals = {t: totals_of([r for r in results if r.target == t]) for t in targets}
    lines = {
        "pass rate": [rate(totals[t].passed, totals[t].conclusive) for t in targets],
        "mean score": [score(totals[t].mean_score) for t in targets],
        "cost": [usd(totals[t].cost_usd) for t in targets],
        "tokens": [tokens(totals[t].tokens) for t in targets],
    }
    return "".join(
        f'<tr class="total"><td>Total</td><td>{name}</td>'
        + "".join(f'<td class="num">{value}</td>' for value in values)
        + "</tr>"
        for name, values in lines.items()
    )


def matrix_section(results: list[TestResult], changes: dict[Key, TestComparison]) -> str:
    """`<section id="matrix">` when the run (or its baseline) has two targets or more, else ""."""
    targets = targets_of(results, changes)
    if len(targets) < 2:
        return ""
    by_key = {(r.suite, r.test_id, r.target): r for r in results}
    tests = sorted({(key[0], key[1]) for key in by_key} | {(key[0], key[1]) for key in changes})
    body = "".join(
        f"<tr><td>{escape(suite)}</td><td>{escape(test_id)}</td>"
        + "".join(_cell(by_key.get((suite, test_id, t)), changes.get((suite, test_id, t))) for t in targets)
        + "</tr>"
        for suite, test_id in tests
    )
    head = "".join(f"<th>{escape(t)}</th>" for t in targets)
    return (
        '<section id="matrix"><h2>Targets side by side</h2>'
        f"<table><thead><tr><th>Suite</th><th>Test</th>{head}</tr></thead>"
        f"<tbody>{body}</tbody><tfoot>{_foot(results, targets)}</tfoot></table></section>"
    )
