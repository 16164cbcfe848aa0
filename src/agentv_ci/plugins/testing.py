"""Helpers for a plugin's own tests: the same contract check and config conversion as the runner.

check_plugin("grader", MyGrader)                           # raises ConfigError when it is broken
result = grade_answer(MyGrader, "the answer", {"limit": 3})  # -> GraderResult
response = call_target(MyTarget, "the prompt", {"prefix": "> "})
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agentv_ci import __version__
from agentv_ci.errors import ConfigError, GraderError
from agentv_ci.model.result import GraderResult, TargetResponse
from agentv_ci.model.score_range import score_problem
from agentv_ci.model.suite import GraderSpec, Message, Test
from agentv_ci.plugins.checks import contract_problem
from agentv_ci.plugins.config import convert_plugin_config
from agentv_ci.plugins.contracts import NAMESPACES, GradingContext, PluginKind, TargetRequest

__all__ = ["call_target", "check_plugin", "grade_answer", "make_grader"]


def check_plugin(kind: PluginKind, cls: type[Any]) -> None:
    """Check `cls` against the contract of `kind` ("grader", "target" or "reporter") exactly as the
    runner does when it loads the plugin; raise `ConfigError` saying what is wrong."""

    if kind not in NAMESPACES:
        raise ValueError(f"kind must be one of {', '.join(NAMESPACES)}, got {kind!r}")
    problem = contract_problem(NAMESPACES[kind], cls, core_version=__version__)
    if problem is not None:
        raise ConfigError(
            f"{kind} plugin {getattr(cls, '__name__', cls)!r} breaks the plugin contract: {problem}"
        )


def make_grader(
    cls: type[Any],
    config: dict[str, Any] | None = None,
    *,
    grader_type: str = "under-test",
    name: str | None = None,
    base_dir: Path | None = None,
) -> Any:
    """An instance of grader `cls` built from raw YAML-like `config`, converted as the runner does."""
    check_plugin("grader", cls)
    spec = GraderSpec(type=grader_type, name=name or grader_type, config=dict(config or {}))
    converted = convert_plugin_config(cls, spec.config, what=f"{grader_type} grader", location=None)
    return cls(spec, converted, base_dir=base_dir or Path.cwd())


def grade_answer(
    cls: type[Any],
    answer: str,
    config: dict[str, Any] | None = None,
    *,
    question: str = "question?",
    threshold: float = 0.8,
    base_dir: Path | None = None,
) -> GraderResult:
    """Grade `answer` (the final assistant message) with grader `cls` built from `config`. A score
    the runner would refuse (outside [0, 1], NaN, infinite, not a number) raises `GraderError`."""
    grader = make_grader(cls, config, base_dir=base_dir)
    directory = base_dir or Path.cwd()
    ctx = GradingContext(
        test=Test(id="test", input=[Message(role="user", content=question)]),
        response=TargetResponse(text=answer, messages=[Message(role="assistant", content=answer)]),
        threshold=threshold,
        eval_path=directory / "under-test.eval.yaml",
        target="under-test",
    )
    result = asyncio.run(grader.grade(ctx))
    name = getattr(cls, "__name__", repr(cls))
    if not isinstance(result, GraderResult):
        raise GraderError(f"grader {name!r} returned {type(result).__name__}, expected GraderResult")
    problem = score_problem(result.score) if result.error is None else None
    if problem is not None:  # what the runner makes an execution error (graders.invoke)
        raise GraderError(
            f"grader {name!r} breaks the scoring contract: {problem}",
            hint="a score is a finite number in [0, 1]; the runner makes any other an execution error",
        )
    return result


def call_target(
    cls: type[Any],
    prompt: str,
    config: dict[str, Any] | None = None,
    *,
    name: str = "under-test",
    base_dir: Path | None = None,
) -> TargetResponse:
    """Ask target `cls` (built from `config` as the runner does) one question; closes it after."""
    check_plugin("target", cls)
    converted = convert_plugin_config(cls, dict(config or {}), what=f"target {name!r}", location=None)
    directory = base_dir or Path.cwd()
    target = cls(name, converted, base_dir=directory)
    messages = [Message(role="user", content=prompt)]
    request = TargetRequest(
        test=Test(id="test", input=messages),
        messages=messages,
        prompt=prompt,
        eval_path=directory / "under-test.eval.yaml",
    )

    async def ask() -> TargetResponse:
        try:
            response: TargetResponse = await target.invoke(request)
            return response
        finally:
            await target.aclose()

    return asyncio.run(ask())
