"""`claude` against a fake `claude` on PATH replaying a recorded stream-json run."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from agentv_ci.errors import TargetError
from agentv_ci.targets.agents.claude import ClaudeConfig, ClaudeTarget
from tests.targets.agents.conftest import invoke, starts, stream_file
from tests.targets.helpers import make_request


def _target(**settings: object) -> ClaudeTarget:
    return ClaudeTarget("claude", ClaudeConfig(**settings), base_dir=Path.cwd())  # type: ignore[arg-type]


def test_runs_headless_in_the_workspace_with_agentvs_flags(
    agent_log: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDECODE", "1")  # set when agentv-ci itself runs inside Claude Code
    monkeypatch.setenv("FAKE_AGENT_ENV", "CLAUDECODE,ANTHROPIC_MODEL_HINT")
    target = _target(
        model="sonnet", max_turns=8, system_prompt="Be terse.", env={"ANTHROPIC_MODEL_HINT": "x"}
    )
    invoke(target, make_request("Fix the bug in calc.py", workspace_path=workspace))
    (start,) = starts(agent_log)
    assert start["argv"] == [
        "-p", "--output-format", "stream-json", "--include-partial-messages", "--verbose",
        "--dangerously-skip-permissions", "--model", "sonnet", "--max-turns", "8",
        "--append-system-prompt", "Be terse.",
    ]  # fmt: skip
    assert start["stdin"] == "Fix the bug in calc.py"
    assert start["cwd"] == str(workspace)
    assert start["env"] == {"CLAUDECODE": None, "ANTHROPIC_MODEL_HINT": "x"}
    assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"  # it really edited
    no_bypass = _target(bypass_permissions=False)
    invoke(no_bypass, make_request("hi", workspace_path=workspace))
    assert "--dangerously-skip-permissions" not in starts(agent_log)[1]["argv"]


def test_the_agent_gets_its_own_credentials_and_no_other_runner_secret(
    agent_log: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-agents-own-key")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "runner-secret-value")
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_runner_token_value")
    monkeypatch.setenv("FAKE_AGENT_ENV", "ANTHROPIC_API_KEY,AWS_SECRET_ACCESS_KEY,GITHUB_TOKEN,HOME")
    invoke(_target(), make_request("Fix the bug in calc.py", workspace_path=workspace))
    (start,) = starts(agent_log)
    assert start["env"] == {
        "ANTHROPIC_API_KEY": "sk-ant-agents-own-key",
        "AWS_SECRET_ACCESS_KEY": None,
        "GITHUB_TOKEN": None,
        "HOME": os.environ["HOME"],
    }


def test_answer_tool_calls_with_durations_usage_and_cost(agent_log: Path, workspace: Path) -> None:
    response = invoke(_target(), make_request("Fix calc.py", workspace_path=workspace))
    assert response.text.startswith("Fixed: `add` in calc.py subtracted instead of adding.")
    calls = [call for message in response.messages for call in message.tool_calls or []]
    assert [call.tool for call in calls] == ["Read", "Edit", "Bash"]
    assert calls[0].input == {"file_path": f"{workspace}/calc.py"}
    assert calls[1].input["new_string"] == "    return a + b"
    assert calls[2].output.endswith("1 passed in 0.01s")
    assert all(call.status == "ok" and call.id for call in calls)
    durations = [call.duration_ms for call in calls]
    assert all(d is not None for d in durations)
    assert durations[2] is not None and 250 <= durations[2] < 5000  # the Bash call took ~300 ms
    assert calls[2].start_time is not None and calls[2].end_time is not None
    assert response.cost_usd == 0.0421386  # total_cost_usd as reported
    assert response.token_usage is not None
    assert (response.token_usage.input, response.token_usage.output) == (18 + 5800 + 64232, 355)
    assert response.token_usage.cached == 64232
    assert response.llm_call_count == 4  # four assistant messages (distinct ids)
    assert response.duration_ms is not None and response.duration_ms > 400


def test_a_failed_run_is_an_execution_error_with_what_the_agent_said(
    agent_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stream_file(
        tmp_path,
        [
            {"$stderr": "Error: Invalid API key · Please run /login"},
            {"type": "result", "subtype": "success", "is_error": True, "result": "Invalid API key"},
            {"$exit": 1},
        ],
        monkeypatch,
    )
    with pytest.raises(TargetError, match=r"^Claude Code exited with code 1: Invalid API key$"):
        invoke(_target(), make_request("hi"))
    stream_file(tmp_path, [{"$stderr": "segfault-ish"}, {"$exit": 3}], monkeypatch)
    with pytest.raises(TargetError, match="exited with code 3: segfault-ish"):
        invoke(_target(), make_request("hi"))


def test_a_run_that_ends_with_no_answer_is_an_execution_error_not_an_empty_answer(
    agent_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Exit 0, a success result, but no text and no tool call: nothing to grade.
    stream_file(
        tmp_path,
        [
            {"type": "system", "subtype": "init"},
            {"type": "result", "subtype": "success", "is_error": False, "result": ""},
        ],
        monkeypatch,
    )
    with pytest.raises(
        TargetError, match=r"^Claude Code: the agent gave no answer \(no text, no tool calls\)$"
    ):
        invoke(_target(), make_request("hi"))


def test_without_workspace_or_cwd_it_runs_in_a_fresh_directory_removed_after(agent_log: Path) -> None:
    invoke(_target(), make_request("hi"))
    cwd = Path(starts(agent_log)[0]["cwd"])
    assert cwd.name.startswith("agentv-ci-claude-") and not cwd.exists()


def test_cwd_setting_is_relative_to_the_project(agent_log: Path, tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    invoke(ClaudeTarget("c", ClaudeConfig(cwd="repo"), base_dir=tmp_path), make_request("hi"))
    assert starts(agent_log)[0]["cwd"] == str(tmp_path / "repo")


def test_timeout_kills_the_agent(agent_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stream_file(tmp_path, [{"type": "system", "subtype": "init"}, {"$sleep": 30}], monkeypatch)
    started = time.monotonic()
    with pytest.raises(TargetError, match=r"Claude Code timed out after 0\.5s"):
        invoke(_target(timeout_seconds=0.5), make_request("hi"))
    assert time.monotonic() - started < 10
    with pytest.raises(ProcessLookupError):  # the agent is gone, not left running
        os.kill(starts(agent_log)[0]["pid"], 0)


def test_a_missing_executable_says_how_to_fix_it(tmp_path: Path) -> None:
    target = _target(executable=str(tmp_path / "no-such-claude"))
    with pytest.raises(
        TargetError, match=r"was not found on PATH \(install Claude Code, or set `executable:`"
    ):
        invoke(target, make_request("hi"))
