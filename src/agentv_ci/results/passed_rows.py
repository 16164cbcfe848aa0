"""A passing row of this run's own `index.jsonl`, read without its grader results.

A report that says nothing about a passing test's graders (JUnit: a passing case is its name, time,
figures and input/output) need not decode them: most rows of a run pass, and their grader results
are most of their bytes. `decode_passed_row` gives a `PassedRow` only for a row that `decode_own_row`
would read as one passing, single-attempt `TestResult` with these same field values; for any other
row (failed, errored, not run, attempts, a legacy shape) it gives None and the caller reads the row
in full. Only for rows our `ResultsWriter` encoded from a `TestResult` (`WrittenRows` describes the
file): the grader results are not checked here, and such rows always decode in full.
"""

from __future__ import annotations

import msgspec

from agentv_ci.model.result import ExecutionStatus, TokenUsage, Verdict

__all__ = ["PassedRow", "decode_passed_row"]


class PassedRow(msgspec.Struct, frozen=True):
    """The fields of a passing `TestResult` its JUnit case shows (same names, types and defaults)."""

    test_id: str
    suite: str
    target: str
    score: float
    execution_status: ExecutionStatus
    verdict: Verdict = "fail"  # as `TestResult` decodes a row without one (then implied, below)
    threshold: float = 0.8
    token_usage: TokenUsage | None = None
    cost_usd: float | None = None
    duration_ms: float | None = None
    eval_path: str | None = None
    line: int | None = None
    input: str | None = None
    output: str | None = None
    # Kept raw (empty when absent), only to tell the rows this type cannot stand for.
    scores: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)
    aggregation: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)
    trials: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)


_DECODER = msgspec.json.Decoder(PassedRow)
_OPEN_LIST = ord("[")


def decode_passed_row(raw: bytes) -> PassedRow | None:
    """`raw` as a `PassedRow` when it is a passing single-attempt row, else None (read it in full)."""
    try:
        row = _DECODER.decode(raw)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None
    status = row.execution_status
    # `outcome_of` after `_imply_verdicts`: a written "fail" (or none) on an "ok" row reads as a pass
    if status != "ok" and (status != "quality_failure" or row.verdict != "pass"):
        return None
    if row.verdict == "skip" or row.aggregation or row.trials:  # attempts: merged by the full reader
        return None
    scores = memoryview(row.scores)
    if scores and scores[0] != _OPEN_LIST:
        return None  # not a list: the typed reader refuses it and the full reader normalises the row
    if len(scores) <= len(b"[]") and b'"assertions"' in raw:
        return None  # what `_typed_row` takes for a flat legacy row: the full reader normalises it
    return row if row.verdict == "pass" else msgspec.structs.replace(row, verdict="pass")
