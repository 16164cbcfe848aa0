from __future__ import annotations

from typing import Any

import pytest

from agentv_ci.model.result import TargetResponse
from agentv_ci.model.suite import GraderSpec, Message, ToolCall
from tests.graders.contexts import make_ctx, run_spec


def calls(*items: Any) -> TargetResponse:
    """`"name"` or `("name", input)` or `("name", input, duration_ms)`."""
    made = []
    for item in items:
        if isinstance(item, str):
            made.append(ToolCall(tool=item))
        else:
            made.append(ToolCall(tool=item[0], input=item[1], duration_ms=item[2] if len(item) > 2 else None))
    return TargetResponse(
        text="done", messages=[Message(role="assistant", content="done", tool_calls=made or None)]
    )


def trajectory(response: TargetResponse, **config: Any):
    return run_spec(
        GraderSpec(type="tool-trajectory", name="traj", config=config), make_ctx(response=response)
    )


SEARCH = ("search", {"q": "refund", "limit": 5})
FETCH = ("fetch", {"id": 1})

CASES = [
    # any_order + minimums
    ({"mode": "any_order", "minimums": {"search": 2, "fetch": 1}}, calls("search", "fetch", "search"), 1.0),
    ({"mode": "any_order", "minimums": {"search": 2, "fetch": 1}}, calls("search", "fetch"), 0.5),
    ({"mode": "any_order", "minimums": {"search": 1}}, calls(), 0.0),  # no calls -> no trace
    # in_order: gaps allowed
    (
        {"mode": "in_order", "expected": [{"tool": "search"}, {"tool": "fetch"}]},
        calls("search", "log", "fetch"),
        1.0,
    ),
    (
        {"mode": "in_order", "expected": [{"tool": "search"}, {"tool": "fetch"}]},
        calls("fetch", "search"),
        0.5,
    ),
    # a same-name call with the wrong args is a miss and is consumed
    (
        {"mode": "in_order", "expected": [{"tool": "search", "args": {"q": "x"}}, {"tool": "search"}]},
        calls(SEARCH, SEARCH),
        0.5,
    ),
    (
        {"mode": "in_order", "expected": [{"tool": "search", "args": {"q": "refund", "limit": 5}}]},
        calls(SEARCH),
        1.0,
    ),
    (
        {"mode": "in_order", "expected": [{"tool": "search", "args": {"q": "refund"}}]},
        calls(SEARCH),
        0.0,
    ),  # exact
    (
        {
            "mode": "in_order",
            "args_match": "superset",
            "expected": [{"tool": "search", "args": {"q": "refund"}}],
        },
        calls(SEARCH),
        1.0,
    ),
    (
        {
            "mode": "in_order",
            "expected": [{"tool": "search", "args": {"q": "refund"}, "args_match": "superset"}],
        },
        calls(SEARCH),
        1.0,
    ),
    (
        {
            "mode": "in_order",
            "expected": [
                {"tool": "search", "args": {"q": "refund", "limit": 5, "x": 1}, "args_match": "subset"}
            ],
        },
        calls(SEARCH),
        1.0,
    ),
    (
        {
            "mode": "in_order",
            "expected": [{"tool": "search", "args": {"q": "other"}, "args_match": "ignore"}],
        },
        calls(SEARCH),
        1.0,
    ),
    ({"mode": "in_order", "expected": [{"tool": "search", "args": "any"}]}, calls(SEARCH), 1.0),
    (
        {
            "mode": "in_order",
            "args_match": ["q"],
            "expected": [{"tool": "search", "args": {"q": "refund", "limit": 9}}],
        },
        calls(SEARCH),
        1.0,
    ),
    (
        {
            "mode": "in_order",
            "expected": [{"tool": "search", "args": {"limit": True}, "args_match": "superset"}],
        },
        calls(("search", {"limit": 1})),
        0.0,
    ),  # true != 1
    # latency: counted only with duration data
    (
        {"mode": "in_order", "expected": [{"tool": "search", "max_duration_ms": 100}]},
        calls(("search", {}, 50)),
        1.0,
    ),
    (
        {"mode": "in_order", "expected": [{"tool": "search", "max_duration_ms": 100}]},
        calls(("search", {}, 150)),
        0.5,
    ),
    ({"mode": "in_order", "expected": [{"tool": "search", "max_duration_ms": 100}]}, calls("search"), 1.0),
    ({"mode": "in_order", "expected": [{"tool": "search", "max_duration_ms": 100}]}, calls("fetch"), 0.0),
    # exact
    ({"mode": "exact", "expected": [{"tool": "search"}, {"tool": "fetch"}]}, calls("search", "fetch"), 1.0),
    ({"mode": "exact", "expected": [{"tool": "search"}, {"tool": "fetch"}]}, calls("fetch", "search"), 0.0),
    ({"mode": "exact", "expected": [{"tool": "search"}, {"tool": "fetch"}]}, calls("search"), 0.5),
    # superset / subset
    (
        {"mode": "superset", "expected": [{"tool": "fetch"}, {"tool": "search"}]},
        calls("search", "x", "fetch"),
        1.0,
    ),
    ({"mode": "superset", "expected": [{"tool": "fetch"}, {"tool": "fetch"}]}, calls("fetch"), 0.5),
    ({"mode": "subset", "expected": [{"tool": "search"}, {"tool": "fetch"}]}, calls("search", "search"), 1.0),
    ({"mode": "subset", "expected": [{"tool": "search"}]}, calls("search", "delete"), 0.5),
    ({"mode": "subset", "expected": [{"tool": "search"}]}, calls(), 1.0),
    ({"mode": "subset", "expected": []}, calls("search"), 0.0),
]


@pytest.mark.parametrize(("config", "response", "score"), CASES)
def test_tool_trajectory_modes(config: dict, response: TargetResponse, score: float) -> None:
    result = trajectory(response, **config)
    assert result.error is None
    assert result.score == pytest.approx(score)


def test_exact_mode_reports_length_mismatch() -> None:
    result = trajectory(
        calls("search", "fetch", "extra"), mode="exact", expected=[{"tool": "search"}, {"tool": "fetch"}]
    )
    assert result.assertions[0].text == "Expected 2 tool calls, got 3" and not result.assertions[0].passed


def test_plain_text_answer_has_no_trace() -> None:
    result = trajectory(TargetResponse(text="hi"), mode="in_order", expected=[{"tool": "search"}])
    assert result.score == 0.0 and result.assertions[0].text == "No trace available for evaluation"


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"mode": "sideways"}, "unknown mode 'sideways'"),
        ({"mode": "in_order", "expected": [{"args": {}}]}, "needs a `tool` name"),
        ({"mode": "in_order", "args_match": "fuzzy", "expected": []}, "args_match must be one of"),
        ({"mode": "in_order", "expected": [{"tool": "x", "args": [1]}]}, "must be a mapping or 'any'"),
        # AgentV skips these (nothing to check); a silent 1.0 here would be a wrong score
        ({}, "needs `expected` or `minimums`"),
        ({"mode": "any_order"}, "needs `expected` or `minimums`"),
        ({"mode": "in_order"}, "needs `expected` or `minimums`"),
    ],
)
def test_bad_trajectory_config(config: dict, message: str) -> None:
    result = trajectory(calls("x"), **config)
    assert result.error is not None and message in result.error


def test_a_mismatch_carries_the_expected_and_the_actual_call() -> None:
    result = trajectory(
        calls(("search", {"q": "returns"}), "answer"),
        mode="in_order",
        expected=[{"tool": "search", "args": {"q": "refund"}}, {"tool": "fetch"}],
    )
    first, second = (a for a in result.assertions if not a.passed)
    assert (first.expected, first.actual) == ('search({"q": "refund"})', 'search({"q": "returns"})')
    assert (second.expected, second.actual) == ("fetch(...)", "calls: search, answer")
    counted = trajectory(calls("search"), mode="any_order", minimums={"fetch": 2})
    [check] = counted.assertions
    assert (check.expected, check.actual) == ("fetch called at least 2 time(s)", "fetch called 0 time(s)")
    allowed = trajectory(calls(("rm", {"path": "/"})), mode="subset", expected=["search"])
    [check] = allowed.assertions
    assert (check.expected, check.actual) == ("search(...)", 'rm({"path": "/"})')


def test_a_call_that_never_finished_fails_its_latency_check() -> None:
    """A call whose end event never came (status `unknown`, no duration) never passes a latency
    check silently: the check fails and says why. A finished call with no duration is skipped."""
    unfinished = ToolCall(tool="Bash", input={"command": "sleep 100"}, status="unknown")
    response = TargetResponse(text="", messages=[Message(role="assistant", tool_calls=[unfinished])])
    config = {"mode": "in_order", "expected": [{"tool": "Bash", "max_duration_ms": 5000}]}
    result = trajectory(response, **config)
    assert result.score == 0.5  # the call was found; its latency check failed
    (latency,) = [a for a in result.assertions if "latency" in a.text]
    assert not latency.passed
    assert "never finished" in latency.text and "status unknown" in latency.text

    finished = ToolCall(tool="Bash", input={"command": "ls"}, status="ok")
    response = TargetResponse(text="", messages=[Message(role="assistant", tool_calls=[finished])])
    assert trajectory(response, **config).score == 1.0  # AgentV: no duration data, check skipped
