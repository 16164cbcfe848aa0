"""`mock`: a canned `response`, or the test's expected output echoed back (what `--dry-run` uses)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import ClassVar

import msgspec

from agentv_ci.model.bounds import Usd, WaitMs
from agentv_ci.model.result import TargetResponse, TokenUsage
from agentv_ci.model.suite import Message, Test
from agentv_ci.plugins import TargetRequest
from agentv_ci.prompting import reference_answer

DRY_RUN_ANSWER = json.dumps(
    {"score": 1, "assertions": [], "checks": [], "overall_reasoning": "dry-run mock"}, separators=(",", ":")
)


class MockConfig(msgspec.Struct, omit_defaults=True):
    response: str | None = None  # canned answer; None = echo the expected output
    delay_ms: WaitMs = 0.0
    cost_usd: Usd | None = None
    token_usage: TokenUsage | None = None
    dry_run: bool = False  # mark answers as dry-run (set by `--dry-run`)


class MockTarget:
    """Answers without any model: the canned `response`, else the test's expected output
    (its last message, tool calls included), else AgentV's dry-run JSON."""

    Config: ClassVar[type[msgspec.Struct]] = MockConfig

    def __init__(self, name: str, config: MockConfig, *, base_dir: Path) -> None:
        self.name = name
        self.config = config
        self.base_dir = base_dir

    async def invoke(self, request: TargetRequest) -> TargetResponse:
        if self.config.delay_ms:
            await asyncio.sleep(self.config.delay_ms / 1000)
        return self.answer(request.test)

    def answer(self, test: Test) -> TargetResponse:
        """The answer to `test`, at once (`invoke` without its delay)."""
        config = self.config
        if config.response is not None:
            text = config.response
            messages = [Message(role="assistant", content=text)]
        elif test.expected_output:
            last = test.expected_output[-1]
            text = reference_answer(test.expected_output)
            messages = [Message(role="assistant", content=last.content, tool_calls=last.tool_calls)]
        else:
            text = DRY_RUN_ANSWER
            messages = [Message(role="assistant", content=text)]
        return TargetResponse(
            text=text,
            messages=messages,
            token_usage=config.token_usage,
            cost_usd=config.cost_usd,
            duration_ms=config.delay_ms,
            dry_run=config.dry_run,
        )

    async def aclose(self) -> None:
        return None
