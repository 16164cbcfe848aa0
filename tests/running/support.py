"""Real building blocks for runner tests: a counting target plugin and hand-built suites."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import ClassVar

import msgspec

from agentv_ci.errors import TargetError
from agentv_ci.model.result import TargetResponse
from agentv_ci.model.source import SourceLocation
from agentv_ci.model.suite import GraderSpec, Message, Suite
from agentv_ci.model.suite import Test as EvalTest
from agentv_ci.plugins import TARGETS_NAMESPACE, TargetRequest, register_for_tests


class CountingConfig(msgspec.Struct):
    delay_s: float = 0.0
    cost_usd: float | None = None
    answer: str = "yes"
    fail_ids: list[str] = []
    flaky_answers: list[str] = []  # answer per attempt number
    echo: bool = False  # answer "echo: <last user message>"


class CountingTarget:
    """Records every call and how many calls were in flight at once (shared across instances)."""

    api_version = "1.0"
    Config: ClassVar[type[msgspec.Struct]] = CountingConfig
    calls: ClassVar[list[tuple[str, str, int]]] = []
    requests: ClassVar[list[TargetRequest]] = []
    in_flight: ClassVar[int] = 0
    max_in_flight: ClassVar[int] = 0
    suites_in_flight: ClassVar[dict[str, int]] = {}
    max_suites_in_flight: ClassVar[int] = 0

    def __init__(self, name: str, config: CountingConfig, *, base_dir: Path) -> None:
        self.name = name
        self.config = config

    @classmethod
    def reset(cls) -> None:
        cls.calls = []
        cls.requests = []
        cls.in_flight = cls.max_in_flight = cls.max_suites_in_flight = 0
        cls.suites_in_flight = {}

    async def invoke(self, request: TargetRequest) -> TargetResponse:
        cls = type(self)
        cls.calls.append((request.test.suite, request.test.id, request.attempt))
        cls.requests.append(request)
        cls.in_flight += 1
        suite = request.test.suite
        cls.suites_in_flight[suite] = cls.suites_in_flight.get(suite, 0) + 1
        cls.max_in_flight = max(cls.max_in_flight, cls.in_flight)
        busy = sum(1 for n in cls.suites_in_flight.values() if n > 0)
        cls.max_suites_in_flight = max(cls.max_suites_in_flight, busy)
        try:
            await asyncio.sleep(self.config.delay_s)
        finally:
            cls.in_flight -= 1
            cls.suites_in_flight[suite] -= 1
        if request.test.id in self.config.fail_ids:
            raise TargetError(f"refused {request.test.id}")
        answer = self.config.answer
        if self.config.echo:
            answer = "echo: " + str([m.content for m in request.messages if m.role == "user"][-1])
        if self.config.flaky_answers:
            answer = self.config.flaky_answers[request.attempt % len(self.config.flaky_answers)]
        return TargetResponse(
            text=answer, messages=[Message(role="assistant", content=answer)], cost_usd=self.config.cost_usd
        )

    async def aclose(self) -> None:
        return None


register_for_tests(TARGETS_NAMESPACE, "counting", CountingTarget)


def make_suite(directory: Path, name: str, count: int, *, target: str = "t", expect: str = "yes") -> Suite:
    """A suite whose tests pass when the answer contains `expect`."""
    path = directory / f"{name}.eval.yaml"
    path.write_text("# hand-built suite\n")
    grader = GraderSpec(type="contains", name="contains", config={"value": expect})
    tests = [
        EvalTest(
            id=f"{name}-{index}",
            input=[Message(role="user", content=f"question {index}")],
            graders=[grader],
            suite=name,
            location=SourceLocation(str(path), index + 1, 3),
        )
        for index in range(count)
    ]
    suite = Suite(name=name, path=str(path), tests=tests)
    suite.execution.target = target
    return suite


def write_targets(directory: Path, body: str) -> None:
    (directory / ".git").mkdir(exist_ok=True)
    (directory / "targets.yaml").write_text(body)
