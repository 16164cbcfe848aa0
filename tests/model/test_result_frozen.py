"""A `TestResult` is built once: no stage may change a row another stage already holds."""

from __future__ import annotations

import msgspec
import pytest

from agentv_ci.model.result import TestResult


def _row() -> TestResult:
    return TestResult(
        test_id="t1", suite="s", target="default", score=1.0, execution_status="ok", verdict="pass"
    )


@pytest.mark.parametrize(("field", "value"), [("verdict", "fail"), ("score", 0.0), ("provenance", None)])
def test_a_built_result_cannot_be_assigned_to(field: str, value: object) -> None:
    row = _row()
    with pytest.raises(AttributeError):
        setattr(row, field, value)
    assert msgspec.structs.asdict(row)[field] == msgspec.structs.asdict(_row())[field]


def test_a_later_stage_adds_a_field_in_a_copy() -> None:
    row = _row()
    stamped = msgspec.structs.replace(row, fingerprint="abc")
    assert (row.fingerprint, stamped.fingerprint) == (None, "abc")
    assert msgspec.json.encode(row) != msgspec.json.encode(stamped)
