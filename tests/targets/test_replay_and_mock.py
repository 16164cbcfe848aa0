from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agentv_ci.errors import ConfigError, TargetError
from agentv_ci.model.result import TargetResponse, TokenUsage
from agentv_ci.model.suite import Message, ToolCall
from agentv_ci.model.suite import Test as EvalTest
from agentv_ci.plugins import TargetRequest
from agentv_ci.targets.mock import DRY_RUN_ANSWER, MockConfig, MockTarget
from agentv_ci.targets.replay import ReplayConfig, ReplayRecorder, ReplayTarget
from tests.targets.helpers import make_request


def test_recorder_then_replay_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "rec" / "answers.jsonl"
    recorder = ReplayRecorder(path)
    answer = TargetResponse(
        text="done",
        messages=[Message(role="assistant", content="done", tool_calls=[ToolCall(tool="ls", input={})])],
        token_usage=TokenUsage(input=3, output=1),
        cost_usd=0.5,
    )
    recorder.record(
        suite="suite", eval_path="x.yaml", test_id="t1", target="live", attempt=0, response=answer
    )
    recorder.record(
        suite="suite",
        eval_path="x.yaml",
        test_id="t1",
        target="live",
        attempt=1,
        response=TargetResponse(text="second"),
    )
    recorder.close()
    target = ReplayTarget("replay", ReplayConfig(fixtures="rec/answers.jsonl"), base_dir=tmp_path)
    first = asyncio.run(target.invoke(make_request(test_id="t1")))
    assert first == answer
    assert asyncio.run(target.invoke(make_request(test_id="t1", attempt=1))).text == "second"
    assert asyncio.run(target.invoke(make_request(test_id="t1", attempt=5))).text == "done"  # falls back
    with pytest.raises(TargetError, match="no recorded answer for test 'other'"):
        asyncio.run(target.invoke(make_request(test_id="other")))


def test_replay_accepts_agentv_output_rows_and_reports_bad_rows(tmp_path: Path) -> None:
    row = {"test_id": "t1", "output": [{"role": "assistant", "content": "from agentv"}]}
    (tmp_path / "a.jsonl").write_text(json.dumps(row) + "\n")
    target = ReplayTarget("r", ReplayConfig(fixtures="a.jsonl"), base_dir=tmp_path)
    assert asyncio.run(target.invoke(make_request(test_id="t1"))).text == "from agentv"
    (tmp_path / "b.jsonl").write_text("{not json\n")
    bad = ReplayTarget("r", ReplayConfig(fixtures="b.jsonl"), base_dir=tmp_path)
    with pytest.raises(ConfigError, match="bad replay row"):
        asyncio.run(bad.invoke(make_request(test_id="t1")))
    with pytest.raises(ConfigError, match="does not exist"):
        ReplayTarget("r", ReplayConfig(fixtures="missing.jsonl"), base_dir=tmp_path)


def test_mock_canned_echo_and_dry_run() -> None:
    canned = MockTarget("m", MockConfig(response="fixed"), base_dir=Path.cwd())
    assert asyncio.run(canned.invoke(make_request())).text == "fixed"
    expected = [Message(role="assistant", content="Paris", tool_calls=[ToolCall(tool="lookup")])]
    test = EvalTest(id="t", input=[Message(role="user", content="q")], expected_output=expected)
    request = TargetRequest(test=test, messages=test.input, prompt="q", eval_path=Path("x"))
    echo = asyncio.run(MockTarget("m", MockConfig(dry_run=True), base_dir=Path.cwd()).invoke(request))
    assert echo.text == "Paris"
    assert echo.messages[0].tool_calls == [ToolCall(tool="lookup")]
    assert echo.dry_run
    bare = asyncio.run(MockTarget("m", MockConfig(), base_dir=Path.cwd()).invoke(make_request()))
    assert json.loads(bare.text)["overall_reasoning"] == "dry-run mock"
    assert bare.text == DRY_RUN_ANSWER


AGENTV_FIXTURE_KEYS = {
    "schema_version",
    "suite",
    "eval_path",
    "test_id",
    "source_target",
    "attempt",
    "variant",
    "fixture_id",
    "recorded_at",
    "source",
    "redaction",
    "output",
    "transcript",
    "token_usage",
    "cost_usd",
    "duration_ms",
    "start_time",
    "end_time",
}  # fmt: skip  (AgentV 4.42.4's ReplayFixtureWireSchema, which is strict)


def test_recordings_are_agentv_replay_fixtures_and_the_latest_recording_wins(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    for text in ("old", "new"):
        recorder = ReplayRecorder(path)
        answer = TargetResponse(
            text=text,
            messages=[Message(role="assistant", content=text, tool_calls=[ToolCall(tool="ls", input={})])],
            token_usage=TokenUsage(input=3, output=1),
            cost_usd=0.25,
            duration_ms=12.0,
        )
        recorder.record(
            suite="s", eval_path="e.yaml", test_id="t1", target="live", attempt=0, response=answer
        )
        recorder.close()
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert all(set(row) <= AGENTV_FIXTURE_KEYS for row in rows)
    assert rows[0]["schema_version"] == "agentv.replay_fixture.v1"
    assert (rows[0]["source_target"], rows[0]["suite"], rows[0]["test_id"]) == ("live", "s", "t1")
    assert rows[0]["output"][0]["tool_calls"] == [{"tool": "ls", "input": {}}]
    target = ReplayTarget("r", ReplayConfig(fixtures="rec.jsonl", source_target="live"), base_dir=tmp_path)
    replayed = asyncio.run(target.invoke(make_request(test_id="t1")))
    assert replayed.text == "new"  # a re-recording replaces the old answer
    assert replayed.token_usage == TokenUsage(input=3, output=1)
    assert (replayed.cost_usd, replayed.duration_ms) == (0.25, 12.0)
