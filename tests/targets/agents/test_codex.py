"""`codex` against a fake `codex` on PATH replaying a recorded `exec --json` run."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentv_ci.errors import ConfigError, TargetError
from agentv_ci.targets.agents.codex import CodexConfig, CodexTarget
from tests.targets.agents.conftest import invoke, starts, stream_file
from tests.targets.helpers import make_request


def _target(**settings: object) -> CodexTarget:
    return CodexTarget("codex", CodexConfig(**settings), base_dir=Path.cwd())  # type: ignore[arg-type]


def test_exec_json_flags_and_the_prompt_on_stdin(agent_log: Path, workspace: Path) -> None:
    target = _target(
        model="gpt-5-codex", model_reasoning_effort="High", sandbox="workspace-write",
        system_prompt="Follow the repo style.", args=["--profile", "ci"],
    )  # fmt: skip
    invoke(target, make_request("Fix calc.py", workspace_path=workspace))
    (start,) = starts(agent_log)
    assert start["argv"] == [
        "--ask-for-approval", "never", "exec", "--json", "--color", "never", "--skip-git-repo-check",
        "--model", "gpt-5-codex", "-c", "model_reasoning_effort=high", "--sandbox", "workspace-write",
        "--profile", "ci", "-",
    ]  # fmt: skip
    assert start["stdin"] == "Follow the repo style.\n\nFix calc.py"
    assert start["cwd"] == str(workspace)


def test_items_become_agentv_named_tool_calls_with_durations(agent_log: Path, workspace: Path) -> None:
    response = invoke(_target(model="gpt-5"), make_request("Fix calc.py", workspace_path=workspace))
    assert response.text == "Fixed `add` in calc.py: it now returns a + b, and the test passes."
    calls = [call for message in response.messages for call in message.tool_calls or []]
    assert [call.tool for call in calls] == ["Bash", "Edit", "Bash", "Skill"]
    assert calls[0].input == {"command": "bash -lc 'cat calc.py'"}
    assert calls[0].output == "def add(a, b):\n    return a - b\n"
    assert calls[1].input == [{"path": f"{workspace}/calc.py", "kind": "update"}]
    assert calls[1].duration_ms is None  # reported only once applied: no duration is made up
    assert calls[2].duration_ms is not None and calls[2].duration_ms >= 200
    assert calls[3].input == {"query": "python addition", "skill": "docs/search"}  # mcp:docs/search
    assert response.token_usage is not None
    assert (response.token_usage.input, response.token_usage.output, response.token_usage.cached) == (
        24763,
        912,
        19328,
    )
    # Codex reports no cost: priced from usage (gpt-5: 1.25 / 0.125 cached / 10 per million).
    assert response.cost_usd == pytest.approx(((24763 - 19328) * 1.25 + 19328 * 0.125 + 912 * 10) / 1e6)
    assert (workspace / "calc.py").read_text().endswith("return a + b\n")


def test_a_failed_turn_is_an_execution_error(
    agent_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stream_file(
        tmp_path,
        [
            {"type": "thread.started", "thread_id": "t"},
            {"type": "turn.started"},
            {"type": "error", "message": "stream disconnected before completion"},
            {"type": "turn.failed", "error": {"message": "unexpected status 401 Unauthorized"}},
            {"$exit": 1},
        ],
        monkeypatch,
    )
    with pytest.raises(TargetError, match="Codex exited with code 1: unexpected status 401 Unauthorized"):
        invoke(_target(), make_request("hi"))


def test_a_reconnect_followed_by_a_completed_turn_is_not_a_failure(
    agent_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reconnect = {"type": "error", "message": "Reconnecting... 1/5 (stream disconnected before completion)"}
    answer = {"type": "item.completed", "item": {"id": "i", "type": "agent_message", "text": "42"}}
    completed = {"type": "turn.completed", "usage": {"input_tokens": 5, "output_tokens": 1}}
    stream_file(tmp_path, [{"type": "turn.started"}, reconnect, answer, completed], monkeypatch)
    assert invoke(_target(), make_request("hi")).text == "42"
    # An error no completed turn follows is still a failure, even with exit code 0.
    stream_file(tmp_path, [{"type": "turn.started"}, answer, completed, reconnect], monkeypatch)
    with pytest.raises(TargetError, match=r"Codex exited with code 0: Reconnecting\.\.\. 1/5"):
        invoke(_target(), make_request("hi"))


def test_base_url_becomes_a_model_provider_of_its_own(
    agent_log: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Codex 0.136 ignores OPENAI_BASE_URL: `base_url` (else that variable) is given as `-c` overrides."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("CODEX_API_KEY", "sk-codex")
    invoke(_target(base_url="http://127.0.0.1:9/v1"), make_request("hi", workspace_path=workspace))
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    invoke(_target(), make_request("hi", workspace_path=workspace))
    first, second = starts(agent_log)
    provider = (
        'model_providers.agentv_ci={{name = "agentv-ci", base_url = "{}", env_key = "{}", '
        'wire_api = "responses"}}'
    )
    first_provider = provider.format("http://127.0.0.1:9/v1", "CODEX_API_KEY")
    assert first["argv"][-5:] == ["-c", 'model_provider="agentv_ci"', "-c", first_provider, "-"]
    assert second["argv"][-2] == provider.format("http://127.0.0.1:8/v1", "OPENAI_API_KEY")


def test_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="model_reasoning_effort must be one of minimal, low"):
        _target(model_reasoning_effort="maximum")
    with pytest.raises(ConfigError, match="sandbox must be one of read-only"):
        _target(sandbox="yolo")


def test_codex_home_is_handed_through(
    agent_log: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each agent's own config directory reaches it without `env:` (Codex read its default config,
    and retried api.openai.com, when CODEX_HOME was stripped)."""
    monkeypatch.setenv("CODEX_HOME", "/opt/codex-home")
    monkeypatch.setenv("FAKE_AGENT_ENV", "CODEX_HOME")
    invoke(_target(), make_request("hi", workspace_path=workspace))
    (start,) = starts(agent_log)
    assert start["env"] == {"CODEX_HOME": "/opt/codex-home"}
