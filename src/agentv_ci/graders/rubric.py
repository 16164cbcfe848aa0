"""`rubrics`: a checklist (or score-range) judged by a grader model. Same engine as `llm-grader`
with `rubrics`; the items come from `criteria` (AgentV v4's canonical `type: rubrics` form).
Plain strings in an assertions list are collected by the loader into one of these."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import msgspec

from agentv_ci.errors import ConfigError
from agentv_ci.graders.llm import LlmGrader, LlmGraderConfig
from agentv_ci.model.result import GraderResult
from agentv_ci.model.suite import GraderSpec
from agentv_ci.plugins import GradingContext


class RubricsConfig(LlmGraderConfig):
    """`criteria` (rubric items; `rubrics` accepted too), plus the llm-grader keys."""

    criteria: list[Any] | None = None


class Rubrics(LlmGrader):
    """`rubrics`: every item is checked by the grader model; score = satisfied weight / total weight."""

    Config: ClassVar[type[msgspec.Struct]] = RubricsConfig

    def __init__(self, spec: GraderSpec, config: RubricsConfig, *, base_dir: Path) -> None:
        super().__init__(spec, config, base_dir=base_dir)
        if not self.rubrics:
            where = spec.config_locations.get("criteria", spec.location)
            raise ConfigError(f"rubrics grader {spec.name!r} has no `criteria` items", location=where)

    async def grade(self, ctx: GradingContext) -> GraderResult:
        # AgentV runs rubrics as an llm-grader and reports that type (the name stays `rubrics`).
        return msgspec.structs.replace(await super().grade(ctx), type="llm-grader")

    def _rubric_source(self, config: Any) -> list[Any] | None:
        items = list(config.criteria or []) + list(config.rubrics or [])
        return items
