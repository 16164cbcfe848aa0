"""What a `--dry-run` calls in place of a target."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import msgspec

from agentv_ci.model.result import TargetResponse
from agentv_ci.model.suite import Test
from agentv_ci.plugins import TargetPlugin, TargetRequest
from agentv_ci.targets.mock import MockConfig, MockTarget


class DryRunTarget:
    """Answers with the mock's placeholder (the expected output echoed back, else AgentV's dry-run
    JSON). The real target was resolved and built exactly as a real run builds it, so its provider,
    configuration and files are checked; it is never called, only closed."""

    Config: ClassVar[type[msgspec.Struct]] = MockConfig

    def __init__(self, real: TargetPlugin, placeholder: MockTarget) -> None:
        self.name = placeholder.name
        self.real = real
        self.placeholder = placeholder
        self.config = placeholder.config
        self.base_dir: Path = placeholder.base_dir

    async def invoke(self, request: TargetRequest) -> TargetResponse:
        return await self.placeholder.invoke(request)

    def answer(self, test: Test) -> TargetResponse:
        """The placeholder's answer to `test`, at once: the runner asks this way, without a request to
        render (nothing reads its prompt) or a coroutine to await."""
        return self.placeholder.answer(test)

    async def aclose(self) -> None:
        await self.real.aclose()
