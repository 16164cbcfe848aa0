"""`skill-trigger`: did the agent use (or avoid) a named skill?"""

from __future__ import annotations

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
    import json

    return json.dumps(value, ensure_ascii=False, default=str)


def triggered_by(call: ToolCall, skill: str) -> bool:
    """AgentV's rule: a `skill` tool whose `input.skill` names it, a `read` of `skills/<name>/...`,
    or a tool output mentioning `skills/<name>/`."""
    marker = f"skills/{skill}/"
    name = call.tool.lower()
    args = call.input if isinstance(call.input, dict) else {}
    if name == "skill" and skill in _text(
        args.get("skill", call.input if isinstance(call.input, str) else "")
    ):
        return True
    if name == "read":
        path = args.get("file_path", args.get("path", args.get("filePath", call.input)))
        if marker in _text(path):
            return True
    return marker in _text(call.output)


class SkillTrigger:
    """`skill-trigger`: score 1 when the skill was triggered exactly when `should_trigger` says so."""

    Config: ClassVar[type[msgspec.Struct]] = SkillTriggerConfig

    def __init__(self, spec: GraderSpec, config: SkillTriggerConfig, *, base_dir: Path) -> None:
        if not config.skill:
            raise ConfigError(f"skill-trigger grader {spec.name!r} needs `skill`", location=spec.location)
        self.spec = spec
        self.skill = config.skill
        self.should_trigger = config.should_trigger

    async def grade(self, ctx: GradingContext) -> GraderResult:
        hits = [c for c in tool_calls_of(ctx.response) if triggered_by(c, self.skill)]
        triggered = bool(hits)
        passed = triggered == self.should_trigger
        state = "was triggered" if triggered else "was not triggered"
        want = "expected" if passed else "unexpected"
        evidence = f"by tool call {hits[0].tool}" if hits else None
        return check(self.spec, passed, f"Skill '{self.skill}' {state} ({want})", evidence)
