"""The page: header (verdict, the baseline, headline numbers with cost and tokens), one row per suite
(pass rate and score distribution as inline SVG, Δ vs baseline, cost, tokens), the changes vs the
baseline, the targets side by side (several targets), then every test, failing ones first, with a
search box. Everything from the run (suite names, test ids, model output, the baseline's name) is
HTML-escaped."""

from __future__ import annotations

from html import escape

from agentv_ci.api import (
    Comparison,
    GateDecision,
    Outcome,
    RunSummary,
    TestComparison,
    TestResult,
    Totals,
    outcome_of,
    totals_by_suite,
    totals_of,
)
from agentv_ci_html_report.assets import CONTENT_SECURITY_POLICY, SCRIPT, STYLE
from agentv_ci_html_report.baseline import baseline_line, comparison_of
from agentv_ci_html_report.changes import (
    Key,
    change_class,
    change_text,
    changes_section,
    rows_by_key,
    suite_delta,
)
from agentv_ci_html_report.charts import histogram_svg, pass_rate_svg
from agentv_ci_html_report.figures import NONE, score, tokens, tokens_of, usd
from agentv_ci_html_report.matrix import matrix_section

ORDER: dict[Outcome, int] = {"failed": 0, "error": 1, "not_run": 2, "passed": 3}
_EXCERPT = 600


def _excerpt(text: str | None) -> str:
    if not text:
        return ""
    return text if len(text) <= _EXCERPT else text[: _EXCERPT - 1] + "…"


def _failed_checks(result: TestResult) -> list[tuple[str, str | None, list[tuple[str, str]]]]:
    """(text, evidence, [(label, value)]) of each failed assertion of each failing grader (the
    values: what it expected and what came back, when the grader says), and grader errors."""
    out: list[tuple[str, str | None, list[tuple[str, str]]]] = []
    for grader in result.scores:
        if grader.error:
            out.append((f"{grader.name}: {grader.error}", None, []))
        elif grader.verdict == "fail":
            failed = [a for a in grader.assertions if not a.passed]
            if not failed:
                out.append((f"{grader.name}: score {grader.score:.2f}", None, []))
            for a in failed:
                # getattr: an agentv-ci older than the `expected` / `actual` fields has neither
                values = [(k, v) for k in ("expected", "actual") if (v := getattr(a, k, None)) is not None]
                out.append((f"{grader.name}: {a.text}", a.evidence, values))
    return out


def _result_row(result: TestResult, changes: dict[Key, TestComparison] | None) -> str:
    """One test's row; `changes` (None without a baseline) adds its base score and change."""
    outcome = outcome_of(result)
    failures = _failed_checks(result)
    change = None if changes is None else changes.get((result.suite, result.test_id, result.target))
    searchable = " ".join(
        [
            result.suite,
            result.test_id,
            result.target,
            outcome,
            "" if change is None else change_text(change),
            result.error or "",
            *(t for t, _, _ in failures),
        ]
    ).lower()
    cells = [
        f'<td><span class="badge {outcome}">{outcome.replace("_", " ")}</span></td>',
        f"<td>{escape(result.suite)}</td>",
        f"<td>{escape(result.test_id)}</td>",
        f"<td>{escape(result.target)}</td>",
        f'<td class="num">{score(result.score)}</td>',
    ]
    if changes is not None:
        cells.append(f'<td class="num">{NONE if change is None else score(change.base_score)}</td>')
        cells.append(
            '<td class="num"></td>'
            if change is None
            else f'<td class="num change {change_class(change)}">{escape(change_text(change))}</td>'
        )
    cells += [
        f'<td class="num">{usd(result.cost_usd)}</td>',
        f'<td class="num">{tokens(tokens_of(result))}</td>',
        f"<td>{_details(result, failures, change)}</td>",
    ]
    return f'<tr class="{outcome}" data-search="{escape(searchable)}">' + "".join(cells) + "</tr>"


def _details(
    result: TestResult,
    failures: list[tuple[str, str | None, list[tuple[str, str]]]],
    change: TestComparison | None,
) -> str:
    parts: list[str] = []
    if change is not None and change.status != "unchanged" and (evidence := change.describe()):
        parts.append(f'<p class="evidence">vs baseline: {escape(evidence)}</p>')
    if result.error:
        parts.append(f'<p class="error">{escape(result.error)}</p>')
    if failures:
        items = "".join(
            f"<li>{escape(text)}"
            + (f' <span class="evidence">({escape(_excerpt(evidence))})</span>' if evidence else "")
            + "".join(
                f'<div class="diff">{label}: {escape(_excerpt(value))}</div>' for label, value in values
            )
            + "</li>"
            for text, evidence, values in failures
        )
        parts.append(f'<ul class="failures">{items}</ul>')
    if result.input or result.output:
        parts.append(
            "<details><summary>input and output</summary>"
            f"<pre>{escape(_excerpt(result.input))}</pre><pre>{escape(_excerpt(result.output))}</pre></details>"
        )
    return "".join(parts)


def _suite_row(totals: Totals, scores: list[float], comparison: Comparison | None, *, total: bool) -> str:
    """A suite's row, or with `total` the whole run's (its delta is the comparison's overall one)."""
    name = "Total" if total else totals.name
    mean = NONE if totals.mean_score is None else f"{totals.mean_score:.3f}"
    delta = ""
    if comparison is not None:
        stats = comparison.overall if total else next((s for s in comparison.suites if s.suite == name), None)
        delta = f'<td class="num">{escape(suite_delta(stats))}</td>'
    return (
        ('<tr class="total">' if total else "<tr>") + f"<td>{escape(name)}</td>"
        f'<td class="num">{totals.tests}</td><td class="num">{totals.passed}</td>'
        f'<td class="num">{totals.failed}</td><td class="num">{totals.errors}</td>'
        f"<td>{pass_rate_svg(totals.pass_rate, name)}</td>"
        f'<td class="num">{mean}</td>'
        f"<td>{histogram_svg(scores, name)}</td>"
        f"{delta}"
        f'<td class="num">{usd(totals.cost_usd)}</td><td class="num">{tokens(totals.tokens)}</td>'
        "</tr>"
    )


def _suite_rows(results: list[TestResult], comparison: Comparison | None) -> str:
    """One row per suite, and a total row when there are several."""
    conclusive = [r for r in results if outcome_of(r) in ("passed", "failed")]
    suites = totals_by_suite(results)
    rows = [
        _suite_row(t, [r.score for r in conclusive if r.suite == t.name], comparison, total=False)
        for t in suites
    ]
    if len(suites) > 1:
        rows.append(_suite_row(totals_of(results), [r.score for r in conclusive], comparison, total=True))
    return "".join(rows)


def _verdict(decision: GateDecision | None) -> str:
    if decision is None:
        return ""
    verdict = decision.verdict
    reasons = "".join(
        f'<p class="reasons">{escape(reason)}</p>' for reason in decision.reasons if reason not in verdict
    )
    return f'<p class="verdict {decision.label.lower()}">{escape(verdict)}</p>{reasons}'


def _facts(summary: RunSummary, overall: Totals) -> list[str]:
    """The headline numbers: tests, outcomes, pass rate, what the run cost and its tokens."""
    rate = "n/a" if overall.pass_rate is None else f"{overall.pass_rate:.0%}"
    facts = [f"{overall.tests} tests", f"{overall.passed} passed", f"{overall.failed} failed"]
    if overall.errors:
        facts.append(f"{overall.errors} errors")
    facts.append(f"pass rate {rate}")
    if summary.spent_usd is not None:  # the run's whole bill (judges and a baseline re-run too)
        facts.append(f"spent {usd(summary.spent_usd)}")
    elif overall.cost_usd is not None:
        facts.append(f"cost {usd(overall.cost_usd)}")
    if summary.unpriced:
        facts.append(f"{summary.unpriced} answer(s) unpriced, so the cost is a floor")
    if overall.tokens is not None:
        facts.append(f"{tokens(overall.tokens)} tokens")
    if summary.started_at:
        facts.append(f"started {summary.started_at}")
    if summary.dry_run:
        facts.append("dry run")
    return facts


def render_page(
    summary: RunSummary, decision: GateDecision | None = None, baseline: RunSummary | None = None
) -> str:
    """The whole report as one HTML document; against `baseline` (or the comparison the gates made,
    in `decision`) with base scores, deltas and the changes."""
    results = sorted(summary.results, key=lambda r: (ORDER[outcome_of(r)], r.suite, r.test_id, r.target))
    overall = totals_of(results)
    comparison = comparison_of(summary, decision, baseline)
    changes = rows_by_key(comparison) if comparison is not None else None
    title = f"agentv-ci report: {overall.passed}/{overall.tests} passed"
    columns = 10 if changes is not None else 8
    rows = "".join(_result_row(r, changes) for r in results) or (
        f'<tr><td colspan="{columns}" class="empty">no results</td></tr>'
    )
    compared = '<th title="the baseline\'s score">Base</th><th>Δ</th>' if changes is not None else ""
    suite_delta_head = "<th>Δ vs baseline</th>" if comparison is not None else ""
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">
<title>{escape(title)}</title>
<style>{STYLE}</style>
</head>
<body>
<header>
<h1>agentv-ci report</h1>
{_verdict(decision)}
{baseline_line(summary.baseline, compared=comparison is not None)}
<p class="meta">{escape(" · ".join(_facts(summary, overall)))}</p>
</header>
<main>
<section id="suites">
<h2>Suites</h2>
<table>
<thead><tr><th>Suite</th><th>Tests</th><th>Passed</th><th>Failed</th><th>Errors</th><th>Pass rate</th>
<th>Mean score</th><th>Score distribution</th>{suite_delta_head}<th>Cost</th><th>Tokens</th></tr></thead>
<tbody>{_suite_rows(results, comparison)}</tbody>
</table>
</section>
{changes_section(comparison) if comparison is not None else ""}
{matrix_section(results, changes or {})}
<section id="results">
<h2>Tests</h2>
<div class="search"><input id="search" type="search"
 placeholder="Search suites, tests, targets, changes, failures" aria-label="Search tests"
 autocomplete="off"><span id="shown">{len(results)} tests</span></div>
<table>
<thead><tr><th>Outcome</th><th>Suite</th><th>Test</th><th>Target</th><th>Score</th>{compared}<th>Cost</th>
<th>Tokens</th><th>Details</th></tr></thead>
<tbody>{rows}</tbody>
</table>
</section>
</main>
<script>{SCRIPT}</script>
</body>
</html>
"""
