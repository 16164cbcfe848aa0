from __future__ import annotations

import json
from typing import Any

import pytest

from agentv_ci.graders.dates import parse_date
from agentv_ci.js_semantics.js_calendar import iso_day
from agentv_ci.model.suite import GraderSpec, Message
from agentv_ci.model.suite import Test as EvalTest
from tests.graders.contexts import make_ctx, run_spec

EXPECTED = {
    "invoice": {"number": "INV-001", "total": 100.0, "date": "2024-03-05", "line_items": [{"amount": 40}]},
    "vendor": "Acme Corp",
    "paid": True,
}


def grade(answer: Any, fields: list[dict], expected: Any = EXPECTED, **config: Any):
    test = EvalTest(id="t", expected_output=[Message(role="assistant", content=expected)])
    output = answer if isinstance(answer, str) else json.dumps(answer)
    spec = GraderSpec(type="field-accuracy", name="fields", config={"fields": fields, **config})
    return run_spec(spec, make_ctx(output, test=test))


def inv(**changes: Any) -> dict:
    invoice = {**EXPECTED["invoice"], **changes}
    return {**EXPECTED, "invoice": invoice}


CASES = [
    (EXPECTED, [{"path": "invoice.number"}], 1.0),
    (inv(number="INV-002"), [{"path": "invoice.number"}], 0.0),
    (EXPECTED, [{"path": "invoice.line_items[0].amount"}], 1.0),
    (EXPECTED, [{"path": "invoice.line_items.0.amount"}], 1.0),
    (inv(total="100.0"), [{"path": "invoice.total", "match": "exact"}], 0.0),  # type mismatch
    (inv(total=100.4), [{"path": "invoice.total", "match": "numeric_tolerance", "tolerance": 0.5}], 1.0),
    (inv(total=101), [{"path": "invoice.total", "match": "numeric_tolerance", "tolerance": 0.5}], 0.0),
    (
        inv(total=101),
        [{"path": "invoice.total", "match": "numeric_tolerance", "tolerance": 0.02, "relative": True}],
        1.0,
    ),
    (
        inv(total=103),
        [{"path": "invoice.total", "match": "numeric_tolerance", "tolerance": 0.02, "relative": True}],
        0.0,
    ),
    (
        inv(total="$100"),
        [{"path": "invoice.total", "match": "numeric_tolerance", "tolerance": 1}],
        0.0,
    ),  # non-numeric
    (inv(total="100.2"), [{"path": "invoice.total", "match": "numeric_tolerance", "tolerance": 1}], 1.0),
    (inv(date="05/03/2024"), [{"path": "invoice.date", "match": "date", "formats": ["DD/MM/YYYY"]}], 1.0),
    (inv(date="05/03/2024"), [{"path": "invoice.date", "match": "date", "formats": ["MM/DD/YYYY"]}], 0.0),
    (inv(date="2024-03-05T10:00:00Z"), [{"path": "invoice.date", "match": "date"}], 1.0),
    (inv(date="05-Mar-2024"), [{"path": "invoice.date", "match": "date"}], 1.0),
    (inv(date="yesterday"), [{"path": "invoice.date", "match": "date"}], 0.0),
    ({**EXPECTED, "vendor": "Acme Corporation Ltd"}, [{"path": "vendor", "match": "contains"}], 1.0),
    ({**EXPECTED, "vendor": "Acme"}, [{"path": "vendor", "match": "contains"}], 0.0),
    (EXPECTED, [{"path": "invoice.number", "match": "regex", "pattern": "^INV-\\d{3}$"}], 1.0),
    (inv(number="X-1"), [{"path": "invoice.number", "match": "regex", "pattern": "^INV-\\d{3}$"}], 0.0),
    # weights and required / optional
    (inv(number="bad"), [{"path": "invoice.number", "weight": 3}, {"path": "vendor"}], 0.25),
    ({"vendor": "Acme Corp"}, [{"path": "invoice.number"}, {"path": "vendor"}], 0.5),  # required missing -> 0
    ({"vendor": "Acme Corp"}, [{"path": "invoice.number", "required": False}, {"path": "vendor"}], 1.0),
    (EXPECTED, [{"path": "not.in.expected"}, {"path": "vendor"}], 1.0),  # no expected value -> 1
    (EXPECTED, [{"path": "paid"}], 1.0),
    ({**EXPECTED, "paid": 1}, [{"path": "paid"}], 0.0),
    # candidate parsing: code fences, prose around JSON
    ("```json\n" + json.dumps(EXPECTED) + "\n```", [{"path": "vendor"}], 1.0),
    ("Here you go: " + json.dumps(EXPECTED) + " -- hope that helps", [{"path": "vendor"}], 1.0),
    ("not json at all", [{"path": "vendor"}], 0.0),
    ("", [{"path": "vendor"}], 0.0),
]


@pytest.mark.parametrize(("answer", "fields", "score"), CASES)
def test_field_accuracy(answer: Any, fields: list[dict], score: float) -> None:
    result = grade(answer, fields)
    assert result.error is None
    assert result.score == pytest.approx(score)


@pytest.mark.parametrize(
    ("aggregation", "score"), [("weighted_average", 0.5), ("all_or_nothing", 0.0), ("minimum", 0.0)]
)
def test_aggregations(aggregation: str, score: float) -> None:
    result = grade(
        inv(number="bad"), [{"path": "invoice.number"}, {"path": "vendor"}], aggregation=aggregation
    )
    assert result.score == score


def test_expected_as_json_text_and_messages_explained() -> None:
    assert grade(EXPECTED, [{"path": "vendor"}], expected=json.dumps(EXPECTED)).score == 1.0
    missing = grade(EXPECTED, [{"path": "vendor"}], expected="no json here")
    assert missing.score == 0.0 and missing.assertions[0].text == "No expected data found in expected_output"
    mismatch = grade(inv(total="100"), [{"path": "invoice.total"}])
    assert mismatch.assertions[0].text == "invoice.total (type mismatch: got string, expected number)"


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"fields": []}, "needs `fields`"),
        ({"fields": [{"match": "exact"}]}, "needs a `path`"),
        ({"fields": [{"path": "a", "match": "fuzzy"}]}, "unknown match 'fuzzy'"),
        ({"fields": [{"path": "a"}], "aggregation": "median"}, "unknown aggregation"),
        ({"fields": [{"path": "a", "match": "regex", "pattern": "("}]}, "invalid regular expression"),
    ],
)
def test_bad_field_config(config: dict, message: str) -> None:
    spec = GraderSpec(type="field-accuracy", name="f", config=config)
    result = run_spec(spec, make_ctx("{}"))
    assert result.error is not None and message in result.error


@pytest.mark.parametrize(
    ("text", "formats", "iso"),
    [
        ("05/03/2024", ["DD/MM/YYYY"], "2024-03-05"),
        ("05/03/2024", ["MM/DD/YYYY"], "2024-05-03"),
        ("05/03/2024", ["MM/DD/YYYY", "DD/MM/YYYY"], "2024-05-03"),  # ambiguous -> month first
        ("25/03/2024", ["MM/DD/YYYY", "DD/MM/YYYY"], "2024-03-25"),
        ("03-25-2024", ["MM-DD-YYYY"], "2024-03-25"),
        ("15-JAN-2025", ["DD-MMM-YYYY"], "2025-01-15"),
        # days overflow into the next month, as JavaScript's dates do (AgentV 4.42.4 gives these)
        ("2024-02-30", ["YYYY-MM-DD"], "2024-03-01"),
        ("31/02/2024", ["DD/MM/YYYY"], "2024-03-02"),
        ("2024-13-01", ["YYYY-MM-DD"], None),
        # what JavaScript's `new Date()` also reads (AgentV tries it first)
        ("2024-3-5", ["YYYY-MM-DD"], "2024-03-05"),
        ("2024/03/05", ["YYYY-MM-DD"], "2024-03-05"),
        ("March 5, 2024", ["YYYY-MM-DD"], "2024-03-05"),
        ("Tue Mar 05 2024", ["YYYY-MM-DD"], "2024-03-05"),
        ("5 March 2024", ["YYYY-MM-DD"], "2024-03-05"),
        ("Someday 5, 2024", ["YYYY-MM-DD"], None),
    ],
)
def test_parse_date(text: str, formats: list[str], iso: str | None) -> None:
    parsed = parse_date(text, formats)
    assert (iso_day(parsed) if parsed else None) == iso


def test_each_field_check_carries_its_path_expected_and_actual() -> None:
    fields = [
        {"path": "invoice.number"},
        {"path": "invoice.total", "match": "numeric_tolerance", "tolerance": 0.5},
        {"path": "vendor", "match": "contains", "value": "Acme"},
        {"path": "invoice.date", "match": "regex", "pattern": "^2024", "flags": "i"},
        {"path": "paid"},
    ]
    answer = {"invoice": {"number": "INV-002", "total": 101, "date": "1999"}, "vendor": "Bolt Ltd"}
    checks = {a.path: (a.passed, a.expected, a.actual) for a in grade(answer, fields).assertions}
    assert checks == {
        "invoice.number": (False, '"INV-001"', '"INV-002"'),
        "invoice.total": (False, "100.0 (tolerance 0.5)", "101"),
        "vendor": (False, 'contains "Acme"', '"Bolt Ltd"'),
        "invoice.date": (False, "/^2024/i", '"1999"'),
        "paid": (False, "true", "(missing)"),
    }


def test_an_answer_that_is_not_json_shows_what_came_back() -> None:
    [check] = grade("sorry, no JSON today", [{"path": "vendor"}]).assertions
    assert (check.passed, check.expected, check.actual) == (False, "a JSON object", '"sorry, no JSON today"')
