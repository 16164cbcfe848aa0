"""`copilot-cli` against a fake `copilot` on PATH speaking ACP (JSON-RPC over stdio)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentv_ci.errors import TargetError
from agentv_ci.targets.agents.copilot import CopilotConfig, CopilotTarget
from tests.targets.agents.conftest import invoke, starts, stream_file
from tests.targets.helpers import make_request


def _target(**settings: object) -> CopilotTarget:
    return CopilotTarget("copilot", CopilotConfig(**settings), base_dir=Path.cwd())  # type: ignore[arg-type]


def test_acp_handshake_prompt_and_permission_grant(agent_log: Path, workspace: Path) -> None:
    target = _target(model="claude-haiku-4.5", system_prompt="Be terse.", args=["--log-level", "error"])
    invoke(target, make_request("Fix calc.py", workspace_path=workspace))
    (start,) = starts(agent_log)
    assert start["argv"] == [
        "--acp", "--stdio", "--allow-all-tools", "--yolo", "--model", "claude-haiku-4.5",
        "--log-level", "error",
    ]  # fmt: skip
    received = start["received"]
    assert [m.get("method") for m in received] == ["initialize", "session/new", "session/prompt", None]
    assert received[0]["params"]["protocolVersion"] == 1
    assert received[1]["params"] == {"cwd": str(workspace), "mcpServers": []}
    assert received[2]["params"]["prompt"] == [
        {"type": "text", "text": "Be terse."},
        {"type": "text", "text": "Fix calc.py"},
    ]
    assert received[3] == {
        "jsonrpc": "2.0",
        "id": 900,
        "result": {"outcome": {"outcome": "selected", "optionId": "allow_always"}},
    }
    assert start["cwd"] == str(workspace)


def test_updates_become_the_answer_tool_calls_and_usage(agent_log: Path, workspace: Path) -> None:
    response = invoke(_target(), make_request("Fix calc.py", workspace_path=workspace))
    assert response.text == "Fixed: add() returns a + b now; the test passes."
    texts = [m.content for m in response.messages if m.content]
    assert "I'll check calc.py." not in texts  # streamed before the thinking: a preview, dropped
    calls = [call for message in response.messages for call in message.tool_calls or []]
    assert [call.tool for call in calls] == [
        "Read",
        "Edit",
        "Bash",
    ]  # Read File / Edit File / runTerminalCommand
    assert calls[0].input["file_path"] == f"{workspace}/calc.py"
    assert calls[2].duration_ms is not None and calls[2].duration_ms >= 150
    assert response.token_usage is not None and response.token_usage.input == 8120
    assert (workspace / "calc.py").read_text().endswith("return a + b\n")


def test_a_protocol_error_and_a_rejected_tool_call_are_execution_errors(
    agent_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stream_file(tmp_path, [{"$exit": 4}], monkeypatch)  # dies while the prompt runs
    with pytest.raises(TargetError, match="Copilot CLI exited with code 4"):
        invoke(_target(), make_request("hi"))
    rejected = [
        {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Write File", "status": "pending"},
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "t1",
            "status": "failed",
            "rawOutput": {"code": "rejected"},
        },
        {"$result": {"stopReason": "end_turn"}},
    ]
    stream_file(tmp_path, rejected, monkeypatch)
    with pytest.raises(
        TargetError, match=r"Copilot rejected 1 tool call\(s\): Write; add args: \[\"--yolo\"\]"
    ):
        invoke(_target(), make_request("hi"))


def test_a_json_rpc_error_answering_the_prompt_is_an_execution_error(
    agent_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stream_file(tmp_path, [{"$error": {"code": -32000, "message": "Authentication required"}}], monkeypatch)
    hinted = r"^Copilot CLI: Authentication required; hint: .*COPILOT_GITHUB_TOKEN.*base_url"
    with pytest.raises(TargetError, match=hinted):
        invoke(_target(), make_request("hi"))
