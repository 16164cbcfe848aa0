"""`pi-cli` / `pi-coding-agent` against a fake `pi` on PATH replaying a recorded `--mode json` run."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentv_ci.errors import TargetError
from agentv_ci.targets.agents.pi import PiConfig, PiTarget
from tests.targets.agents.conftest import invoke, starts, stream_file
from tests.targets.helpers import make_request


def _target(**settings: object) -> PiTarget:
    return PiTarget("pi", PiConfig(**settings), base_dir=Path.cwd())  # type: ignore[arg-type]


def test_flags_files_prompt_and_a_key_that_never_reaches_the_command_line(
    agent_log: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_AGENT_ENV", "OPENROUTER_API_KEY,OPENROUTER_BASE_URL")
    target = _target(
        subprovider="openrouter", model="anthropic/claude-haiku-4.5", api_key="sk-or-secret",
        base_url="https://router.example/api/v1", tools="read,bash,edit", thinking="low",
        system_prompt="Be terse.",
    )  # fmt: skip
    request = make_request(
        "@[User]: Fix calc.py", workspace_path=workspace, files=[str(workspace / "calc.py")]
    )
    invoke(target, request)
    (start,) = starts(agent_log)
    assert start["argv"] == [
        "--provider", "openrouter", "--model", "anthropic/claude-haiku-4.5",
        "--mode", "json", "--print", "--no-session", "--tools", "read,bash,edit", "--thinking", "low",
        f"@{workspace}/calc.py", "Be terse.\n\n[[User]]: Fix calc.py",
    ]  # fmt: skip
    assert "sk-or-secret" not in " ".join(start["argv"])
    assert start["env"] == {
        "OPENROUTER_API_KEY": "sk-or-secret",
        "OPENROUTER_BASE_URL": "https://router.example/api/v1",
    }
    assert start["cwd"] == str(workspace)


def test_messages_tool_executions_usage_and_reported_cost(agent_log: Path, workspace: Path) -> None:
    response = invoke(
        _target(subprovider="openrouter"), make_request("Fix calc.py", workspace_path=workspace)
    )
    assert response.text == "Fixed: add() now returns a + b and the test passes."
    calls = [call for message in response.messages for call in message.tool_calls or []]
    assert [call.tool for call in calls] == ["Read", "Edit", "Bash"]  # AgentV keeps `edit`; we map it
    assert calls[0].input == {"path": "calc.py", "file_path": "calc.py"}
    assert calls[0].output["content"][0]["text"].startswith("def add")
    assert calls[2].duration_ms is not None and calls[2].duration_ms >= 150
    assert response.cost_usd == pytest.approx(0.00172 + 0.00068 + 0.00047 + 0.00038)
    assert response.token_usage is not None
    assert (response.token_usage.input, response.token_usage.output) == (1510 + 1640 + 1720 + 1810, 160)
    assert response.token_usage.cached == 1408 + 1600 + 1700
    assert response.llm_call_count == 4


def test_no_json_events_or_a_model_error_is_an_execution_error(
    agent_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stream_file(tmp_path, [{"$stderr": "Unknown option --mode"}], monkeypatch)
    with pytest.raises(TargetError, match="pi printed no JSON events: Unknown option --mode"):
        invoke(_target(), make_request("hi"))
    failing = {
        "role": "assistant",
        "content": [],
        "stopReason": "error",
        "errorMessage": "401 No auth credentials",
    }
    stream_file(
        tmp_path,
        [{"type": "message_end", "message": failing}, {"type": "agent_end", "messages": []}],
        monkeypatch,
    )
    with pytest.raises(TargetError, match="401 No auth credentials"):
        invoke(_target(), make_request("hi"))


def test_base_url_routes_a_private_copy_of_the_agent_dir(tmp_path: Path) -> None:
    """pi ignores OPENAI_BASE_URL: `base_url` goes into models.json of a copy of its agent dir."""
    import json

    from agentv_ci.targets.agents.pi import routed_agent_dir

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "auth.json").write_text('{"openai": {"type": "api_key", "key": "k"}}')
    own_models = {"providers": {"openai": {"apiKey": "X"}, "ollama": {"baseUrl": "http://o/v1"}}}
    (mine / "models.json").write_text(json.dumps(own_models))
    routed = routed_agent_dir(
        {"PI_CODING_AGENT_DIR": str(mine)}, tmp_path / "copy", "openai", "http://127.0.0.1:9/v1"
    )
    assert json.loads((routed / "models.json").read_text()) == {
        "providers": {
            "openai": {"apiKey": "X", "baseUrl": "http://127.0.0.1:9/v1"},
            "ollama": {"baseUrl": "http://o/v1"},
        }
    }
    assert (routed / "auth.json").read_text() == (mine / "auth.json").read_text()
    assert json.loads((mine / "models.json").read_text()) == own_models  # yours is never written
