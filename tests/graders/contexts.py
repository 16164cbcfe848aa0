"""Building grading contexts and running one grader spec the way the engine does."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agentv_ci.graders.invoke import run_grader_spec
from agentv_ci.model.result import GraderResult, TargetResponse
from agentv_ci.model.suite import GraderSpec, Message, Test
from agentv_ci.plugins import GraderTargetCaller, GradingContext


def make_spec(type_: str, name: str | None = None, **config: Any) -> GraderSpec:
    return GraderSpec(type=type_, name=name or type_, config=config)


def make_ctx(
    output: str = "",
    *,
    test: Test | None = None,
    response: TargetResponse | None = None,
    eval_path: Path | None = None,
    caller: GraderTargetCaller | None = None,
    threshold: float = 0.8,
) -> GradingContext:
    return GradingContext(
        test=test or Test(id="t1", input=[Message(role="user", content="question?")]),
        response=response or TargetResponse(text=output),
        threshold=threshold,
        eval_path=eval_path or Path("/tmp/EVAL.yaml"),
        target="default",
        call_grader_target=caller,
    )


def run_spec(spec: GraderSpec, ctx: GradingContext, base_dir: Path | None = None) -> GraderResult:
    return asyncio.run(run_grader_spec(spec, ctx, base_dir=base_dir or ctx.eval_path.parent))


def grade(type_: str, output: str, **config: Any) -> GraderResult:
    """Grade a plain text answer with one grader built through the entry points."""
    return run_spec(make_spec(type_, **config), make_ctx(output))
