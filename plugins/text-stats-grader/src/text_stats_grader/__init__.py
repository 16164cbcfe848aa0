"""`text-stats`: limits on the answer's length (words, characters, words per sentence).

A complete agentv-ci grader plugin, importing from the public `agentv_ci.api` only: the plugin API
version it is written for, a msgspec `Config`, a constructor taking the spec, the converted config and
the eval file's directory, and an async `grade` returning a `GraderResult`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import ClassVar

import msgspec

from agentv_ci.api import (
    AssertionResult,
    ConfigError,
    GraderResult,
    GraderSpec,
    GradingContext,
    answer_text,
    score_result,
)

__all__ = ["TextStatsConfig", "TextStatsGrader"]

_WORD = re.compile(r"\w+(?:['’-]\w+)*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


class TextStatsConfig(msgspec.Struct):
    """Any subset of the limits; at least one must be set."""

    min_words: int | None = None
    max_words: int | None = None
    max_chars: int | None = None
    max_sentence_words: int | None = None


class TextStatsGrader:
    """Score = fraction of the configured length limits the final answer meets."""

    api_version: ClassVar[str] = "1.0"
    Config: ClassVar[type[msgspec.Struct]] = TextStatsConfig

    def __init__(self, spec: GraderSpec, config: TextStatsConfig, *, base_dir: Path) -> None:
        if all(getattr(config, f) is None for f in TextStatsConfig.__struct_fields__):
            raise ConfigError(
                f"text-stats grader {spec.name!r} needs at least one limit",
                location=spec.location,
                hint="e.g. max_words: 100",
            )
        self.spec = spec
        self.config = config

    async def grade(self, ctx: GradingContext) -> GraderResult:
        text = answer_text(ctx.response)
        words = len(_WORD.findall(text))
        sentences = [s for s in _SENTENCE_END.split(text.strip()) if s]
        longest = max((len(_WORD.findall(s)) for s in sentences), default=0)
        checks: list[AssertionResult] = []
        c = self.config
        if c.min_words is not None:
            checks.append(AssertionResult(f"{words} words >= {c.min_words}", words >= c.min_words))
        if c.max_words is not None:
            checks.append(AssertionResult(f"{words} words <= {c.max_words}", words <= c.max_words))
        if c.max_chars is not None:
            checks.append(
                AssertionResult(f"{len(text)} characters <= {c.max_chars}", len(text) <= c.max_chars)
            )
        if c.max_sentence_words is not None:
            checks.append(
                AssertionResult(
                    f"longest sentence {longest} words <= {c.max_sentence_words}",
                    longest <= c.max_sentence_words,
                )
            )
        score = sum(a.passed for a in checks) / len(checks)
        details = {"words": words, "chars": len(text), "sentences": len(sentences)}
        return score_result(self.spec, score, checks, details=details)
