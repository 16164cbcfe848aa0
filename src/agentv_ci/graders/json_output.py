"""`is-json`: the whole answer parses as JSON (any value, like JavaScript's `JSON.parse`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import msgspec

from agentv_ci.graders.outcome import answer_text, check, excerpt
from agentv_ci.model.result import GraderResult
from agentv_ci.model.suite import GraderSpec
from agentv_ci.plugins import GradingContext


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")  # JSON.parse rejects NaN / Infinity


class IsJsonConfig(msgspec.Struct):
    """`is-json` takes no options."""


class IsJson:
    """`is-json`: passes when the final answer is valid JSON (objects, arrays and scalars alike)."""

    Config: ClassVar[type[msgspec.Struct]] = IsJsonConfig
    inline: ClassVar[bool] = True  # pure computation: graded without an asyncio task

    def __init__(self, spec: GraderSpec, config: IsJsonConfig, *, base_dir: Path) -> None:
        self.spec = spec

    async def grade(self, ctx: GradingContext) -> GraderResult:
        output = answer_text(ctx.response)
        try:
            json.loads(output, parse_constant=_reject_constant)
        except ValueError as exc:
            return check(self.spec, False, "Output is not valid JSON", f"{exc}; output: {excerpt(output)}")
        return check(self.spec, True, "Output is valid JSON")
