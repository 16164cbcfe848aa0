"""Issue 31: a dry run's job whose graders read the answer's text alone is run in one plain call
(running/answer_lane.py). Its rows are exactly those of the usual path (run_job -> run_attempt ->
grade_test), in the same order; graders that read more, plugins (a subclass of ours included), a
grader that does not build and a regex that needs longer all take the usual path."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agentv_ci import grading
from agentv_ci.graders import regex_search
from agentv_ci.graders.text import Contains
from agentv_ci.model.result import AssertionResult, GraderResult, TestResult
from agentv_ci.model.source import SourceLocation
from agentv_ci.model.suite import GraderSpec, Message
from agentv_ci.plugins import GRADERS_NAMESPACE, GradingContext, register_for_tests
from agentv_ci.running.answer_lane import AnswerLanes
from agentv_ci.running.plan import PlanOptions, plan_jobs
from agentv_ci.running.scheduler import Runner, RunnerOptions
from tests.running.support import make_suite, write_targets


class LoudContains(Contains):
    """A plugin's subclass of a built-in that grades otherwise: never graded by `grade_answer`."""

    api_version = "1.1"

    async def grade(self, ctx: GradingContext) -> GraderResult:
        result = await super().grade(ctx)
        return msgspec.structs.replace(result, score=0.0, verdict="fail")


register_for_tests(GRADERS_NAMESPACE, "loud-contains", LoudContains)


def _timeless(row: TestResult) -> TestResult:
    scores = [msgspec.structs.replace(s, duration_ms=None) for s in row.scores]
    return msgspec.structs.replace(row, timestamp="", start_time=None, end_time=None, scores=scores)


def _suite(tmp_path: Path, graders: list[list[GraderSpec]]) -> Any:
    write_targets(tmp_path, "targets:\n  - name: t\n    provider: openai\n")
    suite = make_suite(tmp_path, "lane", len(graders), expect="answer")
    for test, specs in zip(suite.tests, graders, strict=True):
        test.graders = specs
        test.expected_output = [Message(role="assistant", content="the answer is 42")]
    return suite


def _rows(suite: Any, *, lane: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[list[TestResult], int]:
    """The rows of a dry run of `suite`, and how many answers grade_test graded (the usual path)."""
    graded = 0
    real = grading.grade_test

    async def counted(*args: Any, **kwargs: Any) -> TestResult:
        nonlocal graded
        graded += 1
        return await real(*args, **kwargs)

    monkeypatch.setattr("agentv_ci.running.scheduler.grade_test", counted)
    results: list[TestResult] = []
    runner = Runner(plan_jobs([suite], PlanOptions()), RunnerOptions(dry_run=True, workers=3), results.append)
    if not lane:
        monkeypatch.setattr(runner._lanes, "lane", lambda job: None)
    asyncio.run(runner.run())
    return results, graded


def _spec(type_: str, name: str, **fields: Any) -> GraderSpec:
    config = fields.pop("config", {})
    return GraderSpec(type=type_, name=name, config=config, **fields)


def test_the_lane_writes_the_rows_of_the_usual_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    graders = [
        [_spec("contains", "c", config={"value": "answer"}), _spec("regex", "r", config={"value": r"\d+$"})],
        [_spec("equals", "e", config={"value": "nope"}, required=True)],  # a required failure: score 0
        [_spec("icontains", "i", config={"value": "ANSWER"}, negate=True)],
        [_spec("contains-all", "all", config={"value": ["the", "42"]}, weight=2.0, min_score=0.5)],
        [
            _spec("starts-with", "s", config={"value": "the"}),
            _spec("ends-with", "end", config={"value": "x"}),
        ],
        [_spec("regex", "y", config={"value": "answer", "flags": "y"})],  # sticky: not at the start
        [],  # no graders and no criteria: no_graders
        [_spec("is-json", "j")],  # reads more than the text: the usual path
        [_spec("loud-contains", "loud", config={"value": "answer"})],  # a plugin: the usual path
        [_spec("regex", "bad", config={"value": "("})],  # does not build: an execution error, as usual
    ]
    suite = _suite(tmp_path, graders)
    usual, graded_usual = _rows(suite, lane=False, monkeypatch=monkeypatch)
    at_once, graded_at_once = _rows(suite, lane=True, monkeypatch=monkeypatch)
    assert graded_usual == len(graders)
    assert graded_at_once == 4  # no graders, is-json, the plugin and the broken regex
    assert [_timeless(r) for r in at_once] == [_timeless(r) for r in usual]  # same rows, same order
    by_id = {r.test_id: r for r in at_once}
    assert [by_id[f"lane-{i}"].verdict for i in range(6)] == ["pass", "fail", "fail", "pass", "fail", "fail"]
    assert by_id["lane-8"].verdict == "fail"  # the plugin's own grade ran
    assert by_id["lane-9"].execution_status == "execution_error"  # never a pass
    for row in at_once:
        assert row.fingerprint and row.start_time and row.end_time and row.suite == "lane"
        assert all(s.duration_ms is not None for s in row.scores)


def test_a_regex_that_needs_longer_is_finished_off_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A match past its inline slice leaves the lane with the answer it was given (asked once)."""
    suite = _suite(
        tmp_path,
        [[_spec("contains", "c", config={"value": "answer"}), _spec("regex", "r", config={"value": "42"})]],
    )
    usual, _ = _rows(suite, lane=False, monkeypatch=monkeypatch)
    monkeypatch.setattr(regex_search, "search_inline", lambda *a, **k: regex_search.PENDING)
    finished: list[object] = []
    real_finish = regex_search.finish

    async def finish(*args: Any, **kwargs: Any) -> Any:
        finished.append(args)
        return await real_finish(*args, **kwargs)

    monkeypatch.setattr(regex_search, "finish", finish)
    at_once, graded = _rows(suite, lane=True, monkeypatch=monkeypatch)
    assert graded == 1 and len(finished) == 1  # the lane handed it on; the thread finished the match
    assert [_timeless(r) for r in at_once] == [_timeless(r) for r in usual]
    assert at_once[0].verdict == "pass"


def test_a_grader_that_raises_is_an_execution_error_in_the_lane_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Never a crash of the run (nor a pass): the row the usual path writes (run_grader_spec)."""
    suite = _suite(tmp_path, [[_spec("contains", "c", config={"value": "answer"})]] * 2)

    def broken(self: Contains, output: str) -> AssertionResult:
        raise ValueError("boom")

    monkeypatch.setattr(Contains, "assertion", broken)  # what both paths grade with
    usual, _ = _rows(suite, lane=False, monkeypatch=monkeypatch)
    at_once, graded = _rows(suite, lane=True, monkeypatch=monkeypatch)
    assert graded == 0
    assert [_timeless(r) for r in at_once] == [_timeless(r) for r in usual]
    assert [(r.execution_status, r.scores[0].error) for r in at_once] == [
        ("execution_error", "ValueError: boom")
    ] * 2


def test_graders_written_alike_in_each_test_share_one_lane(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inline graders are specs of each test's own (their places differ): written alike, they are
    built once per suite and target; written otherwise, once each. The rows stay the usual path's."""

    def alike(line: int, value: Any = "answer") -> list[GraderSpec]:
        return [
            _spec("contains", "c", config={"value": value}, location=SourceLocation("e.yaml", line, 5)),
            _spec("regex", "r", config={"value": r"\d+$"}, location=SourceLocation("e.yaml", line + 1, 5)),
        ]

    # six alike; then `value` as a number and as other text, and a weight of its own: three more lanes
    graders = [alike(10 * i) for i in range(6)] + [alike(70, 42), alike(80, "nope"), alike(90)]
    graders[-1][0] = msgspec.structs.replace(graders[-1][0], weight=2.0)
    suite = _suite(tmp_path, graders)
    usual, _ = _rows(suite, lane=False, monkeypatch=monkeypatch)
    built = 0
    real_new_lane = AnswerLanes._new

    def counted(self: AnswerLanes, job: Any) -> Any:
        nonlocal built
        built += 1
        return real_new_lane(self, job)

    monkeypatch.setattr(AnswerLanes, "_new", counted)
    at_once, graded = _rows(suite, lane=True, monkeypatch=monkeypatch)
    assert graded == 0 and built == 4
    assert [_timeless(r) for r in at_once] == [_timeless(r) for r in usual]
    by_id = {r.test_id: r for r in at_once}
    assert [by_id[f"lane-{i}"].verdict for i in range(9)] == ["pass"] * 7 + ["fail", "pass"]
    assert by_id["lane-6"].scores[0].assertions[0].text == 'Output contains "42"'
    assert by_id["lane-8"].scores[0].weight == 2.0
