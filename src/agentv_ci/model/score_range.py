"""The scoring contract's range check: a score is a finite number in [0, 1], a count a whole number
no larger than JavaScript's safe integer (what AgentV can write).

One check for every place a score enters: a grader's result (`graders.invoke`), the plugin test
helper (`plugins.testing.grade_answer`) and every row read back from a results file
(`reporting.results_file`). A score of 7, -5 or NaN is never stored, reported or compared.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

from agentv_ci.errors import LoadError
from agentv_ci.model.result import GraderResult, TestResult, TokenUsage
from agentv_ci.model.source import SourceLocation

__all__ = [
    "MAX_COUNT",
    "ROW_NUMBER_HINT",
    "RowNumberError",
    "as_float",
    "checked_row",
    "count_problem",
    "non_finite_literal",
    "row_problem",
    "score_problem",
    "shown_number",
    "usage_problem",
]

MAX_COUNT = 2**53 - 1  # JavaScript's Number.MAX_SAFE_INTEGER: no AgentV row holds a larger count


def shown_number(value: object) -> str:
    """`value` as a message shows it: `5`, `-0.5`, `nan`, `inf`; a huge integer by its first digits
    and length (a 400-digit number is never printed whole)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        text = repr(value)
        return text if len(text) <= 40 else text[:37] + "..."
    if isinstance(value, int):
        if value.bit_length() <= 64:
            return str(value)
        sign = "-" if value < 0 else ""
        try:
            digits = str(abs(value))
        except ValueError:  # past Python's int-to-str limit: its length from its bits
            return f"({sign}a number of about {int(value.bit_length() * math.log10(2)) + 1} digits)"
        return f"{sign}{digits[:6]}... ({len(digits)} digits)"
    return format(value, "g")


def score_problem(value: object, what: str = "score") -> str | None:
    """Why `value` is not a score (`"score 7 is outside [0, 1]"`), or None when it is one."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"{what} {shown_number(value)} is not a number"
    if isinstance(value, float) and not math.isfinite(value):
        return f"{what} {shown_number(value)} is not a finite number"
    if not 0 <= value <= 1:
        return f"{what} {shown_number(value)} is outside [0, 1]"
    return None


def count_problem(value: object, what: str) -> str | None:
    """Why `value` is not a plausible count (tokens, attempts), or None."""
    if isinstance(value, bool) or not isinstance(value, int):
        return f"{what} {shown_number(value)} is not a whole number"
    if not 0 <= value <= MAX_COUNT:
        return f"{what} {shown_number(value)} is outside [0, {MAX_COUNT}]"
    return None


def usage_problem(usage: TokenUsage | None, where: str = "") -> str | None:
    """Why a token count of `usage` is not a plausible count, or None."""
    if usage is None:
        return None
    for name in ("input", "output", "cached", "reasoning"):
        value = getattr(usage, name)
        if value is not None:
            problem = count_problem(value, f"{where}token_usage.{name}")
            if problem is not None:
                return problem
    return None


def _grader_problem(results: Iterable[GraderResult], where: str) -> str | None:
    for result in results:
        label = f"{where}grader {result.name!r} "
        problem = score_problem(result.score, f"{label}score") or usage_problem(result.token_usage, label)
        if problem is None and result.scores:
            problem = _grader_problem(result.scores, label)
        if problem is not None:
            return problem
    return None


def row_problem(row: TestResult) -> str | None:
    """The first number of a results row that breaks the contract: its score, threshold, any
    grader's score, a trial's, the aggregation's scores, a token count. None when all hold."""
    problem = (
        score_problem(row.score)
        or score_problem(row.threshold, "threshold")
        or _grader_problem(row.scores, "")
        or usage_problem(row.token_usage, "")
    )
    if problem is None and row.aggregation is not None:
        summary = row.aggregation
        for value in (*summary.scores, *((summary.mean,) if summary.mean is not None else ())):
            problem = problem or score_problem(value, "aggregation score")
        problem = (
            problem
            or count_problem(summary.passed_attempts, "aggregation.passed_attempts")
            or count_problem(summary.total_attempts, "aggregation.total_attempts")
        )
    for index, trial in enumerate(row.trials):
        if problem is not None:
            break
        found = row_problem(trial)
        problem = f"trials[{index}]: {found}" if found else None
    return problem


class RowNumberError(ValueError):
    """A number in a results row that breaks the contract, found while reading the row."""


ROW_NUMBER_HINT = (
    "scores and thresholds are finite numbers in [0, 1], token counts whole numbers; "
    "no run writes this row: fix or remove it"
)


def as_float(value: float, what: str) -> float:
    """`value` as a float; an integer too large for one (400 digits) raises `RowNumberError`."""
    try:
        return float(value)
    except OverflowError:
        raise RowNumberError(score_problem(value, what) or f"{what} is too large") from None


def checked_row(row: TestResult, file: str, line: int) -> TestResult:
    """`row` when every number in it keeps the contract, else `LoadError` at file:line."""
    problem = row_problem(row)
    if problem is not None:
        location = SourceLocation(file, line, 1 if line else 0)
        raise LoadError(problem, location=location, hint=ROW_NUMBER_HINT)
    return row


_NON_FINITE = re.compile(rb'"(\w+)"\s*:\s*(-?Infinity|NaN)\b')


def non_finite_literal(raw: bytes) -> str | None:
    """For a line that is not JSON: `"score": NaN` (what Python's json writes for a NaN) said plainly,
    or None when the line holds no such value."""
    found = _NON_FINITE.search(raw)
    if found is None:
        return None
    key, value = (part.decode() for part in found.groups())
    return f"{key} {value} is not a finite number (and not JSON)"
