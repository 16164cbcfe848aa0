"""How the page writes numbers: scores and deltas to three places (as the PR comment does), dollars
with the precision small amounts need, token counts with thousands separators."""

from __future__ import annotations

from agentv_ci.api import TestResult

NONE = "–"  # an en dash: no value (not measured, not priced, not in that run)


def score(value: float | None) -> str:
    return NONE if value is None else f"{value:.3f}"


def signed(value: float) -> str:
    return f"{round(value, 3) + 0.0:+.3f}"  # + 0.0: no "-0.000" for a -0.0001 delta


def usd(value: float | None) -> str:
    """$0.000027, $0.0123, $1.23 (the digits the console's cost estimate uses)."""
    if value is None:
        return NONE
    if value == 0:
        return "$0"
    digits = 6 if value < 0.01 else 4 if value < 1 else 2
    return f"${value:,.{digits}f}"


def tokens(value: int | None) -> str:
    return NONE if value is None else f"{value:,}"


def tokens_of(result: TestResult) -> int | None:
    return None if result.token_usage is None else result.token_usage.total


def rate(passed: int, conclusive: int) -> str:
    return NONE if conclusive == 0 else f"{passed / conclusive:.0%} ({passed}/{conclusive})"
