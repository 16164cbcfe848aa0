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


def test_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="model_reasoning_effort must be one of minimal, low"):
        _target(model_reasoning_effort="maximum")
    with pytest.raises(ConfigError, match="sandbox must be one of read-only"):
        _target(sandbox="yolo")
