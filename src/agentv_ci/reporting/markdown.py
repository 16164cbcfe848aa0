"""Markdown summary: the PR comment body and `$GITHUB_STEP_SUMMARY`.

Layout: the verdict line first; a table with one row per suite (tests, pass rate, mean score,
delta vs baseline with its standard error, cost, tokens, duration); the gate reasons; the changes
vs the baseline; why each eval was selected; then collapsible details of the worst tests (input
excerpt, output excerpt, failing assertions). The body always stays under `MAX_CHARS` (GitHub
rejects comments over 65,536 characters): details go first, then table rows; never the verdict.
Model text is escaped: no raw HTML, no @mentions, no `::` workflow commands.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from agentv_ci.model.estimate_text import budget_reached, cost_line
from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.plugins import ReportOptions
from agentv_ci.reporting.console import format_cost, format_duration
from agentv_ci.reporting.details import SUMMARY, attempts_text, failing_graders, failure_text, repo_relative
from agentv_ci.results.plan_check import PLAN_UNKNOWN
from agentv_ci.results.tally import WORST_SHOWN, tally_of
from agentv_ci.results.totals import Totals, outcome_of
from agentv_ci.security.redaction import excerpt
from agentv_ci.text_safety import clean_text, escape_markdown_inline, fenced_block

if TYPE_CHECKING:
    from agentv_ci.compare import Comparison
    from agentv_ci.gating import GateDecision

__all__ = ["MAX_CHARS", "MarkdownReporter", "comparison_for", "render_markdown", "units", "utf8_size"]

MAX_CHARS = 60_000
_MAX_SUITE_ROWS = 200
_MAX_CHANGE_ROWS = 50
_MAX_SELECTION = 50
_MAX_WORST = WORST_SHOWN
_PLAIN_PATH = re.compile(r"[\w./+-]+")
_MAX_VERDICT = 400  # characters of the verdict line before escaping
_MAX_REASON = 300
_ICONS = {0: "✅", 1: "❌", 3: "⚠️"}


def _esc(text: str) -> str:
    return escape_markdown_inline(text)


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _verdict_line(decision: GateDecision) -> str:
    """Capped so that no test name, however long, can push the verdict past the size limit."""
    icon = _ICONS.get(int(decision.exit_code), "⚠️")
    return f"{icon} **agentv-ci: {_esc(_cap(decision.verdict, _MAX_VERDICT))}**"


def units(text: str) -> int:
    """Size as GitHub counts it (UTF-16 code units: an emoji is 2), never less than `len`."""
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF) if not text.isascii() else len(text)


def utf8_size(text: str) -> int:
    """Size in UTF-8 bytes: never less than `units` or `len`, so a cap in bytes holds under any count."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _delta_cell(comparison: Comparison | None, suite: str) -> str:
    if comparison is None:
        return "-"
    stats = (
        comparison.overall
        if suite == "overall"
        else next((s for s in comparison.suites if s.suite == suite), None)
    )
    if stats is None:
        return "-"
    # lazy: `reporting.suite_deltas` loaded only when `_delta_cell` runs
    from agentv_ci.reporting.suite_deltas import delta_text

    return delta_text(stats)


def _row(t: Totals, comparison: Comparison | None, *, bold: bool = False) -> str:
    name = "**Total**" if bold else _esc(t.name)
    rate = "-" if t.pass_rate is None else f"{t.pass_rate:.0%} ({t.passed}/{t.conclusive})"
    mean = "-" if t.mean_score is None else f"{t.mean_score:.3f}"
    extra = []
    if t.errors:
        extra.append(f"{t.errors} errored")
    if t.not_run:
        extra.append(f"{t.not_run} not run")
    tests = f"{t.tests}" + (f" ({', '.join(extra)})" if extra else "")
    tokens = "-" if t.tokens is None else f"{t.tokens:,}"
    return (
        f"| {name} | {tests} | {rate} | {mean} | {_delta_cell(comparison, t.name)} "
        f"| {format_cost(t.cost_usd)} | {tokens} | {format_duration(t.duration_ms)} |"
    )


def _table(summary: RunSummary, comparison: Comparison | None) -> list[str]:
    tally = tally_of(summary.results)
    suites = tally.by_suite()
    lines = [
        "| Suite | Tests | Pass rate | Mean score | Δ vs baseline | Cost | Tokens | Duration |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [_row(t, comparison) for t in suites[:_MAX_SUITE_ROWS]]
    if len(suites) > _MAX_SUITE_ROWS:
        lines.append(f"| … {len(suites) - _MAX_SUITE_ROWS} more suites | | | | | | | |")
    if len(suites) > 1:
        lines.append(_row(tally.overall(), comparison, bold=True))
    return lines


def _baseline_lines(summary: RunSummary, comparison: Comparison | None) -> list[str]:
    """`#### Changes vs baseline` and the line naming the baseline (or why there is none); nothing
    when no baseline was asked for and none is known."""
    # lazy: `reporting.baseline_report` loaded only when `_baseline_lines` runs
    from agentv_ci.reporting.baseline_report import baseline_markdown_line

    source = summary.baseline
    if comparison is None and source is None:
        return []
    lines = ["#### Changes vs baseline"]
    if source is not None:
        lines += ["", baseline_markdown_line(source, compared=comparison is not None)]
    return lines + (["", *_changes(comparison)] if comparison is not None else [])


def _left_out(comparison: Comparison) -> list[str]:
    """Per suite, the tests its delta leaves out (definition changed, new, removed), old and new scores."""
    # lazy: `reporting.suite_deltas` loaded only when `_left_out` runs
    from agentv_ci.reporting.suite_deltas import left_out_of, left_out_text

    lines = []
    for stats in comparison.suites:
        text = left_out_text(left_out_of(comparison, stats.suite))
        if text:
            lines.append(f"- {_esc(stats.suite)}: {_esc(text)}")
    if not lines:
        return []
    shown = lines[:_MAX_SELECTION]
    more = [f"- … {len(lines) - len(shown)} more suites"] if len(lines) > len(shown) else []
    head = "Suite deltas are over matched tests (same test, same definition); left out of them:"
    return ["", head, "", *shown, *more]


def _changes(comparison: Comparison) -> list[str]:
    changed = [t for t in comparison.tests if t.status not in ("unchanged", "new", "removed")]
    new = sum(1 for t in comparison.tests if t.status == "new")
    removed = sum(1 for t in comparison.tests if t.status == "removed")
    if not changed and not new and not removed:
        return ["No test changed beyond noise."]
    order = {"broken": 0, "regressed": 1, "possible regression": 2, "not comparable": 3, "changed": 4}
    changed.sort(key=lambda t: (order.get(t.status, 9), t.delta or 0.0, t.suite, t.test_id, t.target))
    lines: list[str] = []
    if changed:
        lines += ["| Status | Test | Base | Head | Δ | Detail |", "|---|---|---:|---:|---:|---|"]
        for t in changed[:_MAX_CHANGE_ROWS]:
            base = "-" if t.base_score is None else f"{t.base_score:.3f}"
            head = "-" if t.head_score is None else f"{t.head_score:.3f}"
            delta = "-" if t.delta is None else f"{round(t.delta, 3) + 0.0:+.3f}"
            lines.append(
                f"| {t.status} | {_esc(t.label)} | {base} | {head} | {delta} | {_esc(t.describe())} |"
            )
        if len(changed) > _MAX_CHANGE_ROWS:
            lines.append(f"\n… {len(changed) - _MAX_CHANGE_ROWS} more changed tests in the full report.")
    left_out = _left_out(comparison)
    return lines + (left_out if lines else left_out[1:])


_WAIVED_HEADINGS = {
    "flaky": ("Flaky", "Failed now, but the base branch's history labels them flaky: not blocking."),
    "quarantined": ("Quarantined", "Failed now, but quarantined on the base branch: not blocking."),
}


def _waived_sections(decision: GateDecision, comparison: Comparison | None) -> list[str]:
    """`#### Flaky` and `#### Quarantined`, each only when it has a test: why it does not block, and
    the evidence (pass counts base -> head, corrected p-value, interval) when a baseline compared it."""
    rows = {(t.suite, t.test_id, t.target): t for t in comparison.tests} if comparison is not None else {}
    blocks = []
    for kind, (title, lead) in _WAIVED_HEADINGS.items():
        tests = [w for w in decision.waived if w.waiver.kind == kind]
        if not tests:
            continue
        lines = [
            f"#### {title} ({len(tests)})",
            "",
            lead,
            "",
            "| Test | Why | Evidence vs baseline |",
            "|---|---|---|",
        ]
        for waived in tests[:_MAX_CHANGE_ROWS]:
            row = rows.get((waived.suite, waived.test_id, waived.target))
            evidence = _esc(row.describe()) if row is not None and row.base_score is not None else "-"
            lines.append(
                f"| {_esc(waived.label)} | {_esc(_cap(waived.waiver.text, _MAX_REASON))} | {evidence} |"
            )
        if len(tests) > _MAX_CHANGE_ROWS:
            lines.append(f"\n… {len(tests) - _MAX_CHANGE_ROWS} more in the full report.")
        blocks.append("\n".join(lines))
    return blocks


def _selection(selection: Mapping[str, str], repo_root: Path | None, unselecting: list[str]) -> list[str]:
    lines = [f"#### Why these evals ran ({len(selection)})", ""]
    for path in sorted(selection)[:_MAX_SELECTION]:
        shown = clean_text((repo_relative(path, repo_root) if repo_root is not None else None) or path)
        # a plain path reads best as code; anything odd (newline, backtick, markup) is escaped prose
        name = f"`{shown}`" if _PLAIN_PATH.fullmatch(shown) else _esc(shown)
        lines.append(f"- {name}: {_esc(selection[path])}")
    if len(selection) > _MAX_SELECTION:
        lines.append(f"- … {len(selection) - _MAX_SELECTION} more")
    if unselecting:
        # What selection did not consider: a reviewer sees a change that ran nothing.
        lines += ["", f"Changed files that selected no eval ({len(unselecting)}):", ""]
        for path in unselecting[:_MAX_SELECTION]:
            shown = clean_text(path)
            lines.append(f"- `{shown}`" if _PLAIN_PATH.fullmatch(shown) else f"- {_esc(shown)}")
        if len(unselecting) > _MAX_SELECTION:
            lines.append(f"- … {len(unselecting) - _MAX_SELECTION} more")
    return lines


def _worst(summary: RunSummary) -> tuple[list[TestResult], int]:
    """The worst failing or errored tests (errors last, then by score, suite, test id, target): the
    first `_MAX_WORST`, and how many there are."""
    return tally_of(summary.results).worst()


def _detail(result: TestResult) -> str:
    head = f"{result.suite}/{result.test_id} [{result.target}]"
    if outcome_of(result) == "error":
        title = f"**{_esc(head)}**: execution error"
    else:
        title = f"**{_esc(head)}**: score {result.score:.3f} (threshold {result.threshold:.2f})"
        attempts = attempts_text(result)
        if attempts:
            title += f", {attempts}"
    parts = [title, ""]
    if result.error:
        parts += ["Error:", fenced_block(excerpt(result.error, SUMMARY.error)), ""]
    if failing_graders(result):
        # each failed check with what it expected and what came back (values cut at 120 characters),
        # all graders capped together
        text = excerpt(failure_text(result, SUMMARY), SUMMARY.graders)
        parts += ["Failing graders:", fenced_block(text), ""]
    if result.input:
        parts += ["Input:", fenced_block(excerpt(result.input, SUMMARY.input)), ""]
    if result.output:
        parts += ["Output:", fenced_block(excerpt(result.output, SUMMARY.answer)), ""]
    return "\n".join(parts)


def render_markdown(
    summary: RunSummary,
    decision: GateDecision,
    *,
    comparison: Comparison | None = None,
    selection: Mapping[str, str] | None = None,
    limit: int = MAX_CHARS,
    repo_root: Path | None = None,
    size: Callable[[str], int] = units,
    full_report: str | None = None,
) -> str:
    """The summary body (a pure function of its inputs, always shorter than `limit`).

    `size` measures the body against `limit` (default: UTF-16 units, as GitHub counts; the PR comment
    passes `utf8_size`, the strictest count). `full_report` names where the failing tests left out of
    the details can be read; when given, a closing note counts every one of them.
    """
    verdict = _verdict_line(decision)
    incomparable = comparison.incomparable_baseline() if comparison is not None else None
    if incomparable is not None:  # said under the verdict: a green with no test compared must not mislead
        verdict += f"\n\n**Baseline incomparable:** {_esc(_cap(incomparable, _MAX_VERDICT))}."
    elif comparison is None and summary.baseline is not None and not summary.baseline.found:
        # nor may a green gated against no baseline at all read like one that was compared
        why = _esc(_cap(summary.baseline.reason or "unknown", _MAX_VERDICT))
        verdict += f"\n\n**Regression gate not applied:** no baseline: {why}."
    blocks: list[str] = []
    if len(decision.reasons) > 1 or decision.notes:
        blocks.append(
            "\n".join(
                [f"- {_esc(_cap(r, _MAX_REASON))}" for r in decision.reasons[:20]]
                + [f"- note: {_esc(_cap(n, _MAX_REASON))}" for n in decision.notes[:10]]
            )
        )
    blocks.append("\n".join(_table(summary, comparison)))
    if summary.budget_exhausted and summary.budget_usd is not None:
        reached = budget_reached(summary, summary.not_run)
        blocks.append(_esc(reached[:1].upper() + reached[1:]) + ".")
    elif summary.budget_exhausted:
        blocks.append(f"Budget exhausted: {summary.not_run} test(s) did not run.")
    if (cost := cost_line(summary)) is not None:  # the actual cost next to the estimate
        blocks.append(_esc(cost) + ".")
    if summary.plan_unknown:
        blocks.append(_esc(PLAN_UNKNOWN) + ".")
    if summary.cache is not None:
        blocks.append(_esc(summary.cache.describe()))
    baseline = _baseline_lines(summary, comparison)
    if baseline:
        blocks.append("\n".join(baseline))
    blocks.extend(_waived_sections(decision, comparison))
    chosen = selection if selection is not None else summary.selection
    if chosen or summary.unselecting:
        blocks.append("\n".join(_selection(chosen, repo_root, summary.unselecting)))
    # the verdict is never cut: only what follows it is fitted into the space left
    body = verdict + "\n\n" + _fit("\n\n".join(blocks), limit - size(verdict) - 400, size)
    used = size(body)
    worst, failing = _worst(summary)
    if failing:
        shown = worst[:_MAX_WORST]
        opening = f"<details><summary>Worst tests ({len(shown)} of {failing} failing)</summary>\n\n"
        closing = "\n</details>"
        pieces: list[str] = []
        used += size(opening) + size(closing) + 200
        omitted = 0
        for index, result in enumerate(shown):
            piece = _detail(result) + "\n"
            piece_size = size(piece)
            if used + piece_size > limit:
                omitted = len(shown) - index
                break
            pieces.append(piece)
            used += piece_size
        details = "".join(pieces)
        if full_report is not None and failing > len(pieces):
            where = _esc(_cap(full_report, 120))
            details += f"\n… {failing - len(pieces)} more failing test(s) not shown; see {where}.\n"
        elif omitted:
            details += f"\n… {omitted} more failing test(s) left out (size limit {limit:,} characters).\n"
        if details.strip():
            body += "\n\n" + opening + details + closing
    return body + "\n"


def _fit(text: str, limit: int, size: Callable[[str], int] = units) -> str:
    """Cut at a line boundary when over `limit` (as `size` counts; only tables and lists get this long)."""
    if size(text) <= limit:
        return text
    cut = limit - 100
    while cut > 0 and size(text[:cut]) > limit - 100:  # wide characters: shrink until it fits
        cut -= max((size(text[:cut]) - (limit - 100)), 1)
    cut = text.rfind("\n", 0, max(cut, 0))
    return text[: max(cut, 0)] + "\n\n… truncated to stay under GitHub's comment size limit."


class MarkdownReporter:
    """Writes the Markdown summary (PR comment body / step summary).

    Reads `options.decision` (default gates when None), `options.selection` (eval path -> why it ran;
    default `summary.selection`) and `options.baseline` (adds the diff).
    """

    def write(self, summary: RunSummary, options: ReportOptions) -> None:
        text = render_markdown_for(
            summary,
            options.decision,
            options.baseline,
            selection=options.selection,
            repo_root=options.repo_root,
        )
        options.path.write_text(text, encoding="utf-8")


def render_markdown_for(
    summary: RunSummary,
    decision: GateDecision | None,
    baseline: RunSummary | None,
    *,
    selection: Mapping[str, str] | None = None,
    repo_root: Path | None = None,
) -> str:
    """`render_markdown` with default gates when nothing decided, and the diff the decision judged."""
    # lazy: `gating` loaded only when `render_markdown_for` runs
    from agentv_ci.gating import GateOptions, decide

    decision = decision or decide(summary, GateOptions(), baseline)
    comparison = comparison_for(summary, decision, baseline)
    return render_markdown(summary, decision, comparison=comparison, selection=selection, repo_root=repo_root)


def comparison_for(
    summary: RunSummary, decision: GateDecision, baseline: RunSummary | None
) -> Comparison | None:
    """The diff the gates judged (same threshold on both sides), else a fresh one against `baseline`."""
    # lazy: `compare` loaded only when `comparison_for` runs
    from agentv_ci.compare import compare_runs

    if decision.comparison is not None:
        return decision.comparison
    return compare_runs(baseline.results, summary.results) if baseline is not None else None
