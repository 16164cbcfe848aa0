"""skill-trigger: AgentV's trigger rules and its assertion texts, word for word."""

from __future__ import annotations

from typing import Any

import pytest

from agentv_ci.model.result import TargetResponse
from agentv_ci.model.suite import GraderSpec, Message, ToolCall
from tests.graders.contexts import make_ctx, run_spec

CALLS = TargetResponse(
    messages=[
        Message(
            role="assistant",
            content="ok",
            tool_calls=[
                ToolCall(tool="Skill", input={"skill": "pdf-tools"}),
                ToolCall(tool="Read", input={"file_path": "/x/.claude/skills/csv-tools/SKILL.md"}),
                ToolCall(tool="bash", input={}, output="loaded skills/xlsx/run.sh"),
            ],
        )
    ]
)


def grade(response: TargetResponse, **config: Any) -> tuple[float, str]:
    spec = GraderSpec(type="skill-trigger", name="s", config=config)
    result = run_spec(spec, make_ctx("", response=response))
    return result.score, result.assertions[0].text


@pytest.mark.parametrize(
    ("config", "score", "text"),
    [
        ({"skill": "pdf-tools"}, 1.0, 'Skill tool invoked with skill="pdf-tools"'),
        ({"skill": "pdf"}, 1.0, 'Skill tool invoked with skill="pdf-tools"'),  # substring, as AgentV
        ({"skill": "csv-tools"}, 1.0, "Read tool loaded skill file: /x/.claude/skills/csv-tools/SKILL.md"),
        ({"skill": "xlsx"}, 1.0, 'Tool "bash" output referenced skill file for "xlsx"'),
        ({"skill": "docx"}, 0.0, 'Skill "docx" not found in 3 tool call(s)'),
        ({"skill": "docx", "should_trigger": False}, 1.0, 'Skill "docx" correctly did not trigger'),
        ({"skill": "pdf-tools", "should_trigger": False}, 0.0, 'Skill tool invoked with skill="pdf-tools"'),
    ],
)
def test_skill_trigger(config: dict[str, Any], score: float, text: str) -> None:
    assert grade(CALLS, **config) == (score, text)


def test_no_tool_calls_at_all() -> None:
    assert grade(TargetResponse(text="hi"), skill="pdf") == (0.0, "No tool calls recorded")
