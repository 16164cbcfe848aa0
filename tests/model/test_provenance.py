"""What produced a row: the reasons two rows are incomparable, and a results file's hostile
`provenance` read as none (the row compares as an older one), never a crash."""

from __future__ import annotations

import json

import msgspec

from agentv_ci.model.provenance import ModelIdentity, Provenance, differences
from agentv_ci.model.result import TestResult
from agentv_ci.results.results_file import decode_row

JUDGE = ModelIdentity(name="judge", provider="openai", model="gpt-4o", parameters={"temperature": "0"})
BASE = Provenance(
    target=ModelIdentity(name="agent", provider="mock"), judges=[JUDGE], judge_prompt="sha256:a"
)


def test_alike_or_unknown_is_no_difference() -> None:
    assert differences(BASE, msgspec.structs.replace(BASE)) == []
    assert differences(None, BASE) == []  # an older run's row compares as before
    assert differences(BASE, None) == []


def test_each_difference_is_named() -> None:
    head = Provenance(
        target=ModelIdentity(name="agent", provider="mock", parameters={"temperature": "0.7"}),
        judges=[msgspec.structs.replace(JUDGE, model="gpt-4.1")],
        judge_prompt="sha256:b",
        plugins={"shouts": "tone-grader 2.0"},
    )
    assert differences(BASE, head) == [
        "target temperature (none) -> 0.7",
        "judge model gpt-4o -> gpt-4.1",
        "judge prompt template changed",
        "grader shouts (none) -> tone-grader 2.0",
    ]


def test_a_hostile_value_is_cut_in_the_reason() -> None:
    head = msgspec.structs.replace(BASE, judges=[msgspec.structs.replace(JUDGE, model="x" * 10_000)])
    [reason] = differences(BASE, head)
    assert reason.startswith("judge model gpt-4o -> xxx") and reason.endswith("…") and len(reason) < 100


def _row(provenance: object) -> bytes:
    row = {"test_id": "t", "suite": "s", "target": "m", "score": 1.0, "execution_status": "ok"}
    return json.dumps({**row, "provenance": provenance}).encode()


def test_a_results_row_keeps_its_provenance() -> None:
    row = decode_row(
        msgspec.json.encode(TestResult("t", "s", "m", 1.0, "ok", provenance=BASE)), "index.jsonl", 1
    )
    assert row.provenance == BASE


def test_another_tools_provenance_field_is_read_as_none() -> None:
    for foreign in ("built by ci", {"judges": "gpt-4o"}, {"target": {"model": 4}}, [1, 2]):
        assert decode_row(_row(foreign), "index.jsonl", 1).provenance is None
