"""The page: header (verdict, headline numbers), one row per suite (pass rate and score distribution as
inline SVG), then every test, failing ones first, with a search box. Everything from the run (suite
names, test ids, model output) is HTML-escaped."""

from __future__ import annotations

from html import escape
from typing import Any

from agentv_ci.api import (
    GateDecision,
    Outcome,
    RunSummary,
    TestResult,
    outcome_of,
    totals_by_suite,
    totals_of,
)
from agentv_ci_html_report.assets import CONTENT_SECURITY_POLICY, SCRIPT, STYLE
from agentv_ci_html_report.charts import histogram_svg, pass_rate_svg

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


def _result_row(result: TestResult) -> str:
    outcome = outcome_of(result)
    failures = _failed_checks(result)
    searchable = " ".join(
        [
            result.suite,
            result.test_id,
            result.target,
            outcome,
            result.error or "",
            *(t for t, _, _ in failures),
        ]
    ).lower()
    cells = [
        f'<td><span class="badge {outcome}">{outcome.replace("_", " ")}</span></td>',
        f"<td>{escape(result.suite)}</td>",
        f"<td>{escape(result.test_id)}</td>",
        f"<td>{escape(result.target)}</td>",
        f'<td class="num">{result.score:.2f}</td>',
        f"<td>{_details(result, failures)}</td>",
    ]
    return f'<tr class="{outcome}" data-search="{escape(searchable)}">' + "".join(cells) + "</tr>"


def _details(result: TestResult, failures: list[tuple[str, str | None, list[tuple[str, str]]]]) -> str:
    parts: list[str] = []
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


def _suite_rows(results: list[TestResult]) -> str:
    rows: list[str] = []
    for totals in totals_by_suite(results):
        scores = [
            r.score for r in results if r.suite == totals.name and outcome_of(r) in ("passed", "failed")
        ]
        mean = "–" if totals.mean_score is None else f"{totals.mean_score:.2f}"
        rows.append(
            "<tr>"
            f"<td>{escape(totals.name)}</td>"
            f'<td class="num">{totals.tests}</td><td class="num">{totals.passed}</td>'
            f'<td class="num">{totals.failed}</td><td class="num">{totals.errors}</td>'
            f"<td>{pass_rate_svg(totals.pass_rate, totals.name)}</td>"
            f'<td class="num">{mean}</td>'
            f"<td>{histogram_svg(scores, totals.name)}</td>"
            "</tr>"
        )
    return "".join(rows)


def _verdict(decision: GateDecision | None) -> str:
    if decision is None:
        return ""
    verdict = decision.verdict
    reasons = "".join(
        f'<p class="reasons">{escape(reason)}</p>' for reason in decision.reasons if reason not in verdict
    )
    return f'<p class="verdict {decision.label.lower()}">{escape(verdict)}</p>{reasons}'


def render_page(summary: RunSummary, extras: dict[str, Any]) -> str:
    """The whole report as one HTML document."""
    results = sorted(summary.results, key=lambda r: (ORDER[outcome_of(r)], r.suite, r.test_id, r.target))
    overall = totals_of(results)
    decision = extras.get("decision")
    rate = "n/a" if overall.pass_rate is None else f"{overall.pass_rate:.0%}"
    facts = [f"{overall.tests} tests", f"{overall.passed} passed", f"{overall.failed} failed"]
    if overall.errors:
        facts.append(f"{overall.errors} errors")
    facts.append(f"pass rate {rate}")
    if summary.started_at:
        facts.append(f"started {summary.started_at}")
    if summary.dry_run:
        facts.append("dry run")
    title = f"agentv-ci report: {overall.passed}/{overall.tests} passed"
    rows = (
        "".join(_result_row(r) for r in results) or '<tr><td colspan="6" class="empty">no results</td></tr>'
    )
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
<p class="meta">{escape(" · ".join(facts))}</p>
</header>
<main>
<section id="suites">
<h2>Suites</h2>
<table>
<thead><tr><th>Suite</th><th>Tests</th><th>Passed</th><th>Failed</th><th>Errors</th><th>Pass rate</th>
<th>Mean score</th><th>Score distribution</th></tr></thead>
<tbody>{_suite_rows(results)}</tbody>
</table>
</section>
<section id="results">
<h2>Tests</h2>
<div class="search"><input id="search" type="search" placeholder="Search suites, tests, targets, failures"
 aria-label="Search tests" autocomplete="off"><span id="shown">{len(results)} tests</span></div>
<table>
<thead><tr><th>Outcome</th><th>Suite</th><th>Test</th><th>Target</th><th>Score</th><th>Details</th></tr></thead>
<tbody>{rows}</tbody>
</table>
</section>
</main>
<script>{SCRIPT}</script>
</body>
</html>
"""
