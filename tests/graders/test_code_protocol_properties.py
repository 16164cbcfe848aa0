"""Property-based: whatever a code-grader script prints, its answer is read as a grade (score 0..1)
or refused with a ProtocolError (a grader error): never another exception, never a hang."""

from __future__ import annotations

import json
import math

from hypothesis import given
from hypothesis import strategies as st

from agentv_ci.graders.code_protocol import ProtocolError, interpret
from tests.properties import property_settings

FAST = property_settings(300, deadline_ms=2000)

SCALAR = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=12)
JSON = st.recursive(
    SCALAR,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=25,
)
KEYS = ["score", "assertions", "checks", "hits", "misses", "details", "pass", "passed", "verdict",
        "reasoning", "reason", "text", "evidence", "id"]  # fmt: skip
ANSWER = st.dictionaries(st.sampled_from(KEYS), JSON, max_size=6)


def _stdout() -> st.SearchStrategy[str]:
    as_json = ANSWER.map(json.dumps)
    deep = st.integers(min_value=100, max_value=50_000).map(lambda n: '{"score": 1, "details": ' + "[" * n)
    return st.one_of(as_json, JSON.map(json.dumps), deep, st.text(max_size=200))


@FAST
@given(st.integers(min_value=-300, max_value=300), _stdout(), st.text(max_size=50))
def test_any_script_answer_is_a_grade_or_a_protocol_error(exit_code: int, stdout: str, stderr: str) -> None:
    try:
        score, assertions, details, verdict = interpret(exit_code, stdout, stderr)
    except ProtocolError as exc:
        assert str(exc)
        return
    assert isinstance(score, float) and not math.isnan(score) and 0.0 <= score <= 1.0
    assert isinstance(assertions, list) and isinstance(details, dict)
    assert verdict in (None, "pass", "fail")
    json.dumps(details, default=str)  # what is kept can be written to the results
