"""A passing row read without its grader results (results/passed_rows.py) says what the full reader
says, and every other row is left to the full reader."""

from __future__ import annotations

import msgspec
import pytest

from agentv_ci.model.result import AssertionResult, AttemptSummary, GraderResult, TestResult, TokenUsage
from agentv_ci.results.passed_rows import PassedRow, decode_passed_row
from agentv_ci.results.results_file import decode_own_row
from agentv_ci.results.totals import outcome_of

_GRADER = GraderResult("g", "contains", 1.0, "pass", assertions=[AssertionResult("has x", True)])
_SHOWN = [f for f in PassedRow.__struct_fields__ if f not in ("scores", "aggregation", "trials")]


def _row(**fields: object) -> bytes:
    base: dict[str, object] = {"test_id": "t", "suite": "s", "target": "m", "score": 1.0}
    return msgspec.json.encode({**base, **fields})


ROWS = [
    msgspec.json.encode(TestResult("a", "s", "m", 1.0, "ok", verdict="pass", scores=[_GRADER])),
    msgspec.json.encode(
        TestResult(
            "b",
            "s",
            "m",
            -0.0,
            "ok",
            verdict="pass",
            token_usage=TokenUsage(3, 4),
            cost_usd=0.5,
            duration_ms=12.5,
            eval_path="evals/a.yaml",
            line=7,
            input="::x::y",
            output='&<>"\r',
        )
    ),
    _row(execution_status="ok"),  # no verdict: an "ok" row reads as a pass
    _row(execution_status="ok", verdict="fail"),  # read as the full reader reads it: a pass
    _row(execution_status="quality_failure", verdict="pass"),
    _row(execution_status="quality_failure"),
    _row(execution_status="quality_failure", verdict="fail", scores=[msgspec.to_builtins(_GRADER)]),
    _row(execution_status="execution_error", verdict="pass", error="boom"),
    _row(execution_status="not_run", verdict="pass"),
    _row(execution_status="ok", verdict="skip"),
    _row(
        execution_status="ok", verdict="pass", aggregation=msgspec.to_builtins(AttemptSummary("mean", 1, 2))
    ),
    _row(
        execution_status="ok",
        verdict="pass",
        trials=[msgspec.to_builtins(TestResult("t", "s", "m", 1.0, "ok"))],
    ),
    _row(execution_status="ok", verdict="pass", trials=[]),
    _row(execution_status="ok", verdict="pass", aggregation=None),
    _row(execution_status="ok", assertions=[{"text": "x", "passed": False}]),  # a flat legacy row
    _row(execution_status="ok", scores=[], assertions=[{"text": "x", "passed": False}]),
    _row(execution_status="ok", scores=None),  # not our shape: the full reader normalises it
    _row(execution_status="ok", scores={"g": 1}),
    _row(execution_status="ok", metadata={"assertions": [1]}),
    _row(execution_status="done"),
    _row(execution_status="ok", line="7"),
    b'{"testId":"t","suite":"s","target":"m","score":1,"execution_status":"ok"}',
]


@pytest.mark.parametrize("raw", ROWS)
def test_a_passed_row_is_what_the_full_reader_reads_and_only_for_a_single_passing_attempt(raw: bytes) -> None:
    full = decode_own_row(raw, "index.jsonl", 1)
    light = decode_passed_row(raw)
    single_pass = outcome_of(full) == "passed" and full.aggregation is None and not full.trials
    if light is None:  # left to the full reader (`test_the_common_rows_are_read_light` says which)
        return
    assert single_pass
    for field in _SHOWN:
        assert repr(getattr(light, field)) == repr(getattr(full, field)), field


def test_the_common_rows_are_read_light() -> None:
    light = [i for i, raw in enumerate(ROWS) if decode_passed_row(raw) is not None]
    # 12, 13 (an explicit empty `trials`, a null `aggregation`) and the shapes the full reader
    # normalises (14-17, 20, 21) pass too, but are not our writer's: read in full
    assert light == [0, 1, 2, 3, 4]
