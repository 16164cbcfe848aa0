from __future__ import annotations

from typing import Any

import pytest

from agentv_ci.model.result import TargetResponse, TokenUsage
from agentv_ci.model.suite import GraderSpec, Message, ToolCall
from tests.graders.contexts import make_ctx, run_spec

FULL = TargetResponse(
    text="done",
    messages=[
        Message(
            role="assistant",
            content="",
            tool_calls=[
                ToolCall(tool="Read"),
                ToolCall(tool="Grep"),
                ToolCall(tool="Edit"),
                ToolCall(tool="Bash"),
            ],
        ),
        Message(role="assistant", content="done"),
    ],
    token_usage=TokenUsage(input=1000, output=200, cached=50),
    cost_usd=0.02,
    duration_ms=1500.0,
    llm_call_count=2,
)
BARE = TargetResponse(text="done")  # a plain-text answer: no metrics at all


def grade(type_: str, response: TargetResponse, **config: Any):
    return run_spec(GraderSpec(type=type_, name=type_, config=config), make_ctx(response=response))


@pytest.mark.parametrize(
    ("type_", "config", "response", "score"),
    [
        ("latency", {"threshold": 2000}, FULL, 1.0),
        ("latency", {"threshold": 1500}, FULL, 1.0),
        ("latency", {"threshold": 1000}, FULL, 0.0),
        ("latency", {"threshold": 1000}, BARE, 0.0),
        ("cost", {"budget": 0.05}, FULL, 1.0),
        ("cost", {"budget": 0.01}, FULL, 0.0),
        ("cost", {"budget": 1}, BARE, 0.0),
        ("token-usage", {"max_total": 1250}, FULL, 1.0),  # total includes cached
        ("token-usage", {"max_total": 1249}, FULL, 0.0),
        ("token-usage", {"max_input": 1000, "max_output": 100}, FULL, 0.0),
        ("token-usage", {"max_input": 1000, "max_output": 200}, FULL, 1.0),
        ("token-usage", {"max_total": 10}, BARE, 0.0),
        ("execution-metrics", {"max_tool_calls": 4, "max_llm_calls": 2}, FULL, 1.0),
        ("execution-metrics", {"max_tool_calls": 3, "max_llm_calls": 2}, FULL, 0.5),
        (
            "execution-metrics",
            {"max_tokens": 1200, "max_cost_usd": 0.01, "max_duration_ms": 2000},
            FULL,
            2 / 3,
        ),
        ("execution-metrics", {"max_input_tokens": 999, "max_output_tokens": 200}, FULL, 0.5),
        ("execution-metrics", {"target_exploration_ratio": 0.5}, FULL, 1.0),  # Read+Grep of 4 calls
        ("execution-metrics", {"target_exploration_ratio": 0.9, "exploration_tolerance": 0.1}, FULL, 0.0),
        ("execution-metrics", {"target_exploration_ratio": 0.7, "exploration_tolerance": 0.2}, FULL, 1.0),
        # missing data -> failed checks, not a crash
        (
            "execution-metrics",
            {
                "max_tool_calls": 5,
                "max_tokens": 10,
                "max_cost_usd": 1,
                "max_duration_ms": 9,
                "max_llm_calls": 3,
                "target_exploration_ratio": 0.5,
            },
            BARE,
            0.0,
        ),
    ],
)
def test_metric_graders(type_: str, config: dict, response: TargetResponse, score: float) -> None:
    result = grade(type_, response, **config)
    assert result.error is None
    assert result.score == pytest.approx(score)


def test_missing_metric_is_explained() -> None:
    result = grade("execution-metrics", BARE, max_cost_usd=1.0)
    assert result.assertions[0].text == "Cost data not available"
    assert grade("latency", BARE, threshold=5).assertions[0].text == "No duration data available in trace"
    assert grade("cost", BARE, budget=1).assertions[0].text == "No cost data available in trace"
    assert (
        grade("token-usage", BARE, max_total=1).assertions[0].text == "No token usage data available in trace"
    )


def test_metric_texts_use_agentv_wording() -> None:
    response = TargetResponse(text="x", cost_usd=0.02, duration_ms=1200.0)
    assert grade("cost", response, budget=0.019).assertions[0].text == "Cost $0.0200 > $0.0190 budget"
    assert (
        grade("latency", response, threshold=1200).assertions[0].text == "Duration 1200ms <= 1200ms threshold"
    )
    metrics = grade("execution-metrics", response, max_duration_ms=1000, max_cost_usd=0.5)
    assert [a.text for a in metrics.assertions] == [
        "Cost $0.0200 <= $0.5000 max",
        "Duration 1200ms > 1000ms max",
    ]


@pytest.mark.parametrize(
    ("type_", "config", "message"),
    [
        ("latency", {}, "needs `threshold`"),
        ("latency", {"threshold": -1}, "Expected `float` >= 0.0 - at `$.threshold`"),
        ("cost", {}, "needs `budget`"),
        ("token-usage", {}, "needs one of max_total"),
        ("execution-metrics", {"exploration_tolerance": 0.1}, "needs at least one of"),
        ("execution-metrics", {"max_tool_calls": "many"}, "Expected `int | null`"),
    ],
)
def test_bad_metric_config(type_: str, config: dict, message: str) -> None:
    result = grade(type_, FULL, **config)
    assert result.error is not None and message in result.error


SKILL_CALLS = [
    ([ToolCall(tool="Skill", input={"skill": "pdf-extract"})], "pdf-extract", True),
    ([ToolCall(tool="skill", input={"skill": "acme:pdf-extract"})], "pdf-extract", True),
    (
        [ToolCall(tool="Read", input={"file_path": "/repo/.claude/skills/pdf-extract/SKILL.md"})],
        "pdf-extract",
        True,
    ),
    (
        [ToolCall(tool="Bash", input={"cmd": "ls"}, output="see skills/pdf-extract/README")],
        "pdf-extract",
        True,
    ),
    ([ToolCall(tool="Read", input={"file_path": "/repo/skills/other/SKILL.md"})], "pdf-extract", False),
    ([ToolCall(tool="Skill", input={"skill": "other"})], "pdf-extract", False),
    ([], "pdf-extract", False),
]


@pytest.mark.parametrize(("calls", "skill", "triggered"), SKILL_CALLS)
@pytest.mark.parametrize("should_trigger", [True, False])
def test_skill_trigger(calls: list[ToolCall], skill: str, triggered: bool, should_trigger: bool) -> None:
    response = TargetResponse(
        text="x", messages=[Message(role="assistant", content="x", tool_calls=calls or None)]
    )
    result = grade("skill-trigger", response, skill=skill, should_trigger=should_trigger)
    assert result.score == (1.0 if triggered == should_trigger else 0.0)


def test_skill_trigger_needs_a_skill() -> None:
    assert "needs `skill`" in (grade("skill-trigger", FULL).error or "")
