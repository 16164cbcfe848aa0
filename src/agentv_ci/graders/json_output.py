"""`is-json`: the whole answer parses as JSON (any value, like JavaScript's `JSON.parse`).

An answer nested deeper than Python's decoder can recurse is checked by `json_syntax` instead, which
has no depth limit: V8 accepts 100,000 levels, and a valid document is never an execution error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import msgspec

from agentv_ci.graders.json_syntax import json_syntax_error
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
            problem = None
        except ValueError as exc:
            problem = str(exc)
        except RecursionError:  # deeper than the decoder recurses: checked without recursion
            problem = json_syntax_error(output)
        if problem is not None:
            evidence = f"{problem}; output: {excerpt(output)}"
            return check(self.spec, False, "Output is not valid JSON", evidence)
        return check(self.spec, True, "Output is valid JSON")
