"""`skill-trigger`: did the agent use (or avoid) a named skill?"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agentv_ci.errors import ConfigError
from agentv_ci.graders.outcome import check
from agentv_ci.graders.tool_calls import tool_calls_of
from agentv_ci.model.result import GraderResult
from agentv_ci.model.suite import GraderSpec, ToolCall
from agentv_ci.plugins import GradingContext


class SkillTriggerConfig(msgspec.Struct):
    """`skill` (required) and `should_trigger` (default true)."""

    skill: str | None = None
    should_trigger: bool = True


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value

    return json.dumps(value, ensure_ascii=False, default=str)


def trigger_evidence(call: ToolCall, skill: str) -> str | None:
    """AgentV's rule, with its evidence text: a `skill` tool whose `input.skill` names it, a `read` of
    `skills/<name>/...`, or a tool output mentioning `skills/<name>/`. None when not triggered."""
    marker = f"skills/{skill}/"
    name = call.tool.lower()
    args = call.input if isinstance(call.input, dict) else {}
    if name == "skill":
        arg = _text(args.get("skill", call.input if isinstance(call.input, str) else ""))
        if skill in arg:
            return f'Skill tool invoked with skill="{arg}"'
    elif name == "read":
        path = _text(args.get("file_path", args.get("path", "")))
        if marker in path:
            return f"Read tool loaded skill file: {path}"
    if call.output is not None and marker in _text(call.output):
        return f'Tool "{call.tool}" output referenced skill file for "{skill}"'
    return None


def triggered_by(call: ToolCall, skill: str) -> bool:
    """Whether this tool call triggered `skill` (see `trigger_evidence`)."""
    return trigger_evidence(call, skill) is not None


class SkillTrigger:
    """`skill-trigger`: score 1 when the skill was triggered exactly when `should_trigger` says so."""

    Config: ClassVar[type[msgspec.Struct]] = SkillTriggerConfig
    inline: ClassVar[bool] = True  # pure computation: graded without an asyncio task

    def __init__(self, spec: GraderSpec, config: SkillTriggerConfig, *, base_dir: Path) -> None:
        if not config.skill:
            raise ConfigError(f"skill-trigger grader {spec.name!r} needs `skill`", location=spec.location)
        self.spec = spec
        self.skill = config.skill
        self.should_trigger = config.should_trigger

    async def grade(self, ctx: GradingContext) -> GraderResult:
        calls = tool_calls_of(ctx.response)
        evidence = next((e for e in (trigger_evidence(c, self.skill) for c in calls) if e), None)
        triggered = evidence is not None
        passed = triggered == self.should_trigger
        # AgentV's assertion texts, word for word.
        if evidence is not None:
            text = evidence
        elif self.should_trigger:
            text = (
                f'Skill "{self.skill}" not found in {len(calls)} tool call(s)'
                if calls
                else "No tool calls recorded"
            )
        else:
            text = f'Skill "{self.skill}" correctly did not trigger'
        return check(self.spec, passed, text)
