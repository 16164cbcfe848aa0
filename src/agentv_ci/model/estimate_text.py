"""The cost estimate as text: the `run --dry-run` table, the one-line total the Action prints before
it runs and the comment shows next to the actual cost, the `--budget-usd` refusal and the budget
reached."""

from __future__ import annotations

import math

from agentv_ci.model.estimate import CostEstimate, EstimateLine, Span
from agentv_ci.model.result import RunSummary
from agentv_ci.text_safety import neutralise_workflow_commands, printable

__all__ = [
    "budget_amount",
    "budget_reached",
    "budget_refusal",
    "cost_line",
    "estimate_table",
    "estimate_total",
    "usd",
]


def usd(value: float, rounding: str = "nearest") -> str:
    """Dollars with the precision small amounts need: $0.000123, $0.0123, $1.23; `rounding` "down"
    or "up" keeps a range's ends from narrowing it."""
    if value == 0:
        return "$0"
    digits = 6 if value < 0.01 else 4 if value < 1 else 2
    scale = 10**digits
    if rounding == "down":
        value = math.floor(value * scale + 1e-9) / scale
    elif rounding == "up":
        value = math.ceil(value * scale - 1e-9) / scale
    return f"${value:,.{digits}f}"


def usd_range(span: Span) -> str:
    return f"{usd(span.low, 'down')}-{usd(span.high, 'up')}"


def _tokens(span: Span) -> str:
    return f"{int(span.low):,}-{int(span.high):,} (~{int(span.expected):,})"


def _count(span: Span) -> str:
    low, high = int(span.low), int(span.high)
    return f"{high:,}" if low == high else f"{low:,}-{high:,}"


def _who(line: EstimateLine) -> str:
    """`target NAME (MODEL)`: names from targets.yaml, which a pull request may change, kept to one
    printable line and unable to start a `::` workflow command in the Action's log."""
    role = "target" if line.role == "target" else "grader target"
    model = f" ({printable(line.model)})" if line.model else ""
    return neutralise_workflow_commands(f"{role} {printable(line.target)}{model}")


def estimate_total(estimate: CostEstimate) -> str:
    """`$0.0012-$0.0400 (expected ~$0.0050)`, plus what it leaves out."""
    text = f"{usd_range(estimate.cost_usd)} (expected ~{usd(estimate.cost_usd.expected)})"
    if estimate.unpriced:
        names = ", ".join(printable(name) for name in estimate.unpriced)
        text += neutralise_workflow_commands(f", not counting {names} (no price)")
    return text


def estimate_table(
    estimate: CostEstimate, heading: str = "cost estimate (before anything is spent):"
) -> list[str]:
    """`heading`, one line per target and grader target, then the total and how the figures were made."""
    lines = [heading]
    for line in estimate.lines:
        text = f"  {_who(line)}: {_count(line.requests)} request(s)"
        if line.cached is not None:
            text += f" (+{_count(line.cached)} answer(s) from the response cache, free)"
        if line.cost_usd is not None or line.note is None:
            text += (
                f", input tokens {_tokens(line.input_tokens)}, output tokens {_tokens(line.output_tokens)}"
            )
        if line.cost_usd is not None:
            text += f", cost {usd_range(line.cost_usd)} (~{usd(line.cost_usd.expected)})"
        if line.note:
            text += f" [{line.note}]"
        lines.append(text)
    lines.append(f"  total: {estimate_total(estimate)}")
    lines.append(
        f"  input tokens counted by {_method(estimate.tokenizer)}; output tokens from "
        f"{estimate.output_source} (docs/running.md: Cost before spending)"
    )
    return lines


def _method(tokenizer: str) -> str:
    return "tiktoken (+-10%)" if tokenizer.startswith("tiktoken") else "characters / 4 (+-25%)"


def budget_refusal(estimate: CostEstimate, budget_usd: float) -> str:
    """Why a run does not start, in one sentence: even the low end of its estimate is over the budget.
    `nothing was run: even the low end of the estimated cost, $0.0123, is over the budget of $0.0100
    (estimate $0.0123-$0.0400, expected ~$0.0200; target bot (gpt-4o) $0.0100-$0.0300, ...)`."""
    parts = [
        f"{_who(line)} {usd_range(line.cost_usd)}"
        for line in estimate.lines
        if line.cost_usd is not None and line.cost_usd.high > 0
    ]
    total = f"estimate {usd_range(estimate.cost_usd)}, expected ~{usd(estimate.cost_usd.expected)}"
    if estimate.unpriced:
        names = ", ".join(printable(name) for name in estimate.unpriced)
        total += neutralise_workflow_commands(f", not counting {names} (no price)")
    detail = "; ".join([total, *parts])
    return (
        f"nothing was run: even the low end of the estimated cost, {usd(estimate.cost_usd.low, 'up')}, "
        f"is over the budget of {budget_amount(budget_usd)} ({detail})"
    )


def cost_line(summary: RunSummary) -> str | None:
    """The run's cost next to its estimate, for the console, the Markdown summary and the PR comment:
    `Cost: $0.0123 spent (estimated before the run: $0.0008-$0.0441, expected ~$0.0062)`. None when
    no model API took part and nothing was spent."""
    estimate = summary.estimate
    if summary.dry_run:
        if estimate is None:
            return None
        return f"Estimated cost of a real run: {estimate_total(estimate)}"
    spent = summary.spent_usd
    if estimate is None and not spent:
        return None
    text = f"Cost: {usd(spent)} spent" if spent is not None else "Cost: unknown"
    if estimate is not None:
        text += f" (estimated before the run: {estimate_total(estimate)})"
    if summary.unpriced:
        text += f"; {summary.unpriced} answer(s) came with no price"
    return text


def budget_amount(value: float) -> str:
    """A budget as the user wrote it: `$1.50`, or `usd`'s precision when cents do not say it."""
    cents = round(value * 100)
    return f"${value:,.2f}" if cents and abs(value * 100 - cents) < 1e-9 else usd(value)


def budget_reached(summary: RunSummary, not_run: int) -> str:
    """Why a run that stopped at its budget, or ended over it, is not green:
    `budget reached: $2.00 of $1.50, 2 test(s) not run`. Results written before the budget was
    recorded in summary.json say `budget exhausted: N test(s) not run`."""
    if summary.budget_usd is None or summary.spent_usd is None:
        return f"budget exhausted: {not_run} test(s) not run"
    text = f"budget reached: {budget_amount(summary.spent_usd)} of {budget_amount(summary.budget_usd)}"
    if not_run:
        return text + f", {not_run} test(s) not run"
    # everything ran, and the last attempt went over; or, in the Action, the baseline re-run
    # (on the same bill) was held back or stopped by it: its baseline line says which
    return text + (", spent over it" if summary.spent_usd > summary.budget_usd else "")
