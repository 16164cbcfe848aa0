from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentv_ci.model.result import TestResult
from agentv_ci.model.suite import GraderSpec, Message, Turn
from agentv_ci.running.plan import PlanOptions, plan_jobs
from agentv_ci.running.scheduler import Runner, RunnerOptions
from tests.running.support import CountingTarget, make_suite, write_targets


def _contains(value: str) -> list[GraderSpec]:
    return [GraderSpec(type="contains", name="contains", config={"value": value})]


def _converse(tmp_path: Path, expectations: list[str], **options: object) -> TestResult:
    CountingTarget.reset()
    write_targets(tmp_path, "targets:\n  - name: t\n    provider: counting\n    echo: true\n")
    suite = make_suite(tmp_path, "chat", 1, expect="user: first")
    test = suite.tests[0]
    test.input = [Message(role="system", content="be nice")]
    test.mode = "conversation"
    test.turns = [
        Turn(input=[Message(role="user", content=word)], graders=_contains(expect))
        for word, expect in zip(["first", "second", "third"], expectations, strict=True)
    ]
    for key, value in options.items():
        setattr(test, key, value)
    results: list[TestResult] = []
    asyncio.run(Runner(plan_jobs([suite], PlanOptions()), RunnerOptions(), results.append).run())
    [result] = results
    return result


def test_turns_history_and_transcript_grading(tmp_path: Path) -> None:
    result = _converse(tmp_path, ["first", "second", "nope"])
    assert [len(r.messages) for r in CountingTarget.requests] == [2, 4, 6]  # history grows each turn
    assert CountingTarget.requests[2].messages[-2].content == "echo: second"
    names = [(g.name, g.verdict) for g in result.scores]
    assert names == [("turn-1", "pass"), ("turn-2", "pass"), ("turn-3", "fail"), ("conversation", "pass")]
    assert result.score == pytest.approx(0.75)  # mean of 1, 1, 0 and the transcript's 1
    assert result.execution_status == "quality_failure"
    assert result.output is not None and "assistant: echo: third" in result.output


def test_min_aggregation_stop_on_failure_and_window(tmp_path: Path) -> None:
    stopped = _converse(tmp_path, ["nope", "second", "third"], on_turn_failure="stop", aggregation="min")
    assert len(CountingTarget.requests) == 1
    assert stopped.score == 0.0 and stopped.verdict == "fail"
    windowed = _converse(tmp_path, ["first", "second", "third"], window_size=1)
    third = CountingTarget.requests[2].messages
    assert [m.content for m in third] == ["be nice", "second", "echo: second", "third"]
    assert windowed.verdict == "pass"


def test_a_stopped_conversation_counts_its_skipped_turns_as_zero(tmp_path: Path) -> None:
    """AgentV: pass, fail, then stop -> the third turn is skipped and scores 0: mean of 1, 0, 0 and
    the transcript's 1 = 1/2, not 2/3 (leaving it out would let stopping score higher than going on
    and failing)."""
    stopped = _converse(tmp_path, ["first", "nope", "third"], on_turn_failure="stop")
    assert len(CountingTarget.requests) == 2
    assert [(g.name, g.verdict, g.score) for g in stopped.scores] == [
        ("turn-1", "pass", 1.0),
        ("turn-2", "fail", 0.0),
        ("turn-3", "skip", 0.0),
        ("conversation", "pass", 1.0),
    ]
    assert stopped.score == pytest.approx(0.5)
    went_on = _converse(tmp_path, ["first", "nope", "nope"])
    assert went_on.score == pytest.approx(0.5) and stopped.score <= went_on.score
