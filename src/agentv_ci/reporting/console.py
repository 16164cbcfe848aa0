"""Console report: a compact per-suite table and the verdict line (safe to print to a CI log)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentv_ci.model.estimate_text import budget_reached, cost_line
from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.reporting.details import failure_headline
from agentv_ci.results.plan_check import PLAN_UNKNOWN
from agentv_ci.results.tally import CONSOLE_LISTED, tally_of
from agentv_ci.results.totals import Totals, outcome_of
from agentv_ci.text_safety import clean_text, neutralise_workflow_commands, printable

if TYPE_CHECKING:
    from agentv_ci.gating import GateDecision

__all__ = ["first_line_excerpt", "format_cost", "format_duration", "render_console"]

_FAILED_LISTED = CONSOLE_LISTED
EXCERPT_CHARS = 160


def first_line_excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """The first line of `text`, shortened at a word boundary with "..." when longer than `limit`
    (a word longer than half the limit is cut, so one huge token cannot empty the excerpt)."""
    line = text.splitlines()[0] if text else ""
    if len(line) <= limit:
        return line
    cut = line[: limit - 3]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "..."


def format_cost(value: float | None) -> str:
    return "-" if value is None else f"${value:.4f}"


def format_duration(ms: float | None) -> str:
    if ms is None:
        return "-"
    seconds = ms / 1000
    return f"{seconds:.1f}s" if seconds < 120 else f"{seconds / 60:.1f}m"


def _rate(t: Totals) -> str:
    return "-" if t.pass_rate is None else f"{t.pass_rate:.0%}"


def _mean(t: Totals) -> str:
    return "-" if t.mean_score is None else f"{t.mean_score:.3f}"


def _why_failed(result: TestResult) -> str:
    """`score 0.500 < 0.80 - contains: expected "30 days", got "..."`: the score and the first failed
    check that says what it expected and what came back (or a judge's reason), when one does."""
    why = f"score {result.score:.3f} < {result.threshold:.2f}"
    headline = failure_headline(result)
    return f"{why} - {headline}" if headline else why


def render_console(summary: RunSummary, decision: GateDecision | None) -> str:
    """A fixed-width table (suite, tests, passed, failed, errors, pass rate, mean, cost, tokens, time),
    up to ten failing tests, and the verdict line last."""
    tally = tally_of(summary.results)
    suites = tally.by_suite()
    overall = tally.overall()
    header = ("suite", "tests", "pass", "fail", "error", "rate", "mean", "cost", "tokens", "time")
    rows = [
        (
            printable(t.name),
            str(t.tests),
            str(t.passed),
            str(t.failed),
            str(t.errors),
            _rate(t),
            _mean(t),
            format_cost(t.cost_usd),
            "-" if t.tokens is None else str(t.tokens),
            format_duration(t.duration_ms),
        )
        for t in [*suites, overall]
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: tuple[str, ...]) -> str:
        first = cells[0].ljust(widths[0])
        rest = [c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]
        return "  ".join([first, *rest]).rstrip()

    lines = [line(header)]
    lines += [line(r) for r in rows[:-1]]
    lines.append("-" * len(lines[0]))
    lines.append(line(rows[-1]))
    # A dry run's scores are placeholders: only its errors are worth a line.
    listed, bad = tally.console_listed(errors_only=summary.dry_run)
    if bad:
        lines.append("")
        for r in listed[:_FAILED_LISTED]:
            kind = "ERROR" if outcome_of(r) == "error" else "FAIL "
            why = r.error or _why_failed(r)
            name = printable(f"{r.suite}/{r.test_id} [{r.target}]")  # ids are data: one line each
            lines.append(f"  {kind} {name}: {printable(first_line_excerpt(why))}")
        if bad > _FAILED_LISTED:
            lines.append(f"  ... and {bad - _FAILED_LISTED} more")
    if summary.budget_exhausted:
        lines.append(budget_reached(summary, summary.not_run or overall.not_run))
    if summary.plan_unknown:
        lines.append(PLAN_UNKNOWN)
    if summary.cache is not None:
        lines.append(summary.cache.describe())

    if (cost := cost_line(summary)) is not None:
        lines.append(cost)
    if summary.baseline is not None:
        # lazy: `reporting.baseline_report` loaded only when `render_console` runs
        from agentv_ci.reporting.baseline_report import baseline_log_line

        lines.append(baseline_log_line(summary.baseline))
    if decision is not None:
        lines.append("")
        lines.extend(f"  note: {printable(n)}" for n in decision.notes[:10])
        lines.append(f"RESULT: {printable(decision.verdict)}")
        lines.extend(f"  - {printable(reason)}" for reason in decision.reasons[1:10])
    return neutralise_workflow_commands(clean_text("\n".join(lines)))
