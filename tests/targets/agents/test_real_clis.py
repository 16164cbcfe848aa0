"""The real coding-agent CLIs (Codex CLI 0.136.0, Copilot CLI 1.0.102, pi 0.74.2) through our targets,
offline: each talks to a scripted model on 127.0.0.1 (tests/fakes/model_script_server.py), runs its
own tools for real in a workspace, and its events become our transcript.

The CLIs are npm packages, not installed by `make setup` or CI. Point `AGENTV_CI_TEST_CODEX`,
`AGENTV_CI_TEST_COPILOT` and `AGENTV_CI_TEST_PI` at their executables, or put `codex`, `copilot`
and `pi` on PATH; a test whose CLI is absent is skipped and says how to install it:
`npm install --prefix /work/tools/clis agentv@4.42.4 @earendil-works/pi-coding-agent@0.74.2`
(AgentV's dependencies carry `@openai/codex` and `@github/copilot`), then
`export PATH=/work/tools/clis/node_modules/.bin:$PATH`.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from agentv_ci.errors import TargetError
from agentv_ci.model.result import TargetResponse
from agentv_ci.model.suite import ToolCall
from agentv_ci.targets.agents.codex import CodexConfig, CodexTarget
from agentv_ci.targets.agents.copilot import CopilotConfig, CopilotTarget
from agentv_ci.targets.agents.pi import PiConfig, PiTarget
from tests.fakes.model_script_server import ModelScriptServer, Turn
from tests.targets.agents.conftest import invoke
from tests.targets.helpers import make_request

PACKAGES = {
    "codex": "@openai/codex@0.136.0",
    "copilot": "@github/copilot@1.0.102",
    "pi": "@earendil-works/pi-coding-agent@0.74.2",
}
CODEX_MODEL = "gpt-5.1-codex"  # a model Codex knows: it offers its full tool set
# Codex's exec_command returns a session id instead of the result when the command outlives
# `yield_time_ms` (a busy machine): its item then never completes. Wait long enough for `ls`.
LS = {"cmd": "ls", "login": False, "yield_time_ms": 20000}


def _cli(name: str) -> str:
    found = os.environ.get(f"AGENTV_CI_TEST_{name.upper()}") or shutil.which(name)
    if not found:
        pytest.skip(
            f"the {name} CLI is not installed: set AGENTV_CI_TEST_{name.upper()} to its executable or put "
            f"`{name}` on PATH (npm install {PACKAGES[name]})"
        )
    return found


@pytest.fixture(autouse=True)
def _private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each CLI reads and writes its config under HOME: a fresh one per test, nothing of the user's."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("CODEX_HOME", "COPILOT_HOME", "PI_CODING_AGENT_DIR", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    (path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    return path


def _calls(response: TargetResponse) -> list[ToolCall]:
    return [call for message in response.messages for call in message.tool_calls or []]


def _codex(**settings: object) -> CodexTarget:
    config = CodexConfig(executable=_cli("codex"), model=CODEX_MODEL, timeout_seconds=90, **settings)  # type: ignore[arg-type]
    return CodexTarget("codex", config, base_dir=Path.cwd())


PATCH = (
    "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: calc.py\n@@\n"
    "-    return a - b\n+    return a + b\n*** End Patch\nEOF\n"
)


def test_codex_shell_call_and_answer(workspace: Path) -> None:
    script = [Turn(call=("exec_command", LS)), Turn(text="calc.py is there")]
    with ModelScriptServer(script) as server:
        target = _codex(base_url=server.base_url, env={"OPENAI_API_KEY": "sk-local"})
        response = invoke(target, make_request("List the files", workspace_path=workspace))
    assert response.text == "calc.py is there"
    (call,) = _calls(response)
    assert call.tool == "Bash" and "ls" in str(call.input)
    assert call.status == "ok" and call.output == "calc.py\n"
    assert call.duration_ms is not None  # started and finished: a measured duration
    assert response.token_usage is not None and response.token_usage.input == 200  # two model calls
    assert "function_call_output" in server.requests[-1].text()  # Codex really ran it and sent the output


def test_codex_file_edit_under_workspace_write(workspace: Path) -> None:
    script = [Turn(call=("exec_command", {"cmd": PATCH})), Turn(text="fixed")]
    with ModelScriptServer(script) as server:
        target = _codex(
            base_url=server.base_url, sandbox="workspace-write", env={"OPENAI_API_KEY": "sk-local"}
        )
        response = invoke(target, make_request("Fix calc.py", workspace_path=workspace))
    assert response.text == "fixed"
    (call,) = _calls(response)
    assert call.tool == "Edit" and call.status == "ok"
    assert call.input == [{"path": str(workspace / "calc.py"), "kind": "update"}]
    assert (workspace / "calc.py").read_text().endswith("return a + b\n")


def test_codex_default_sandbox_rejects_writes_without_a_trajectory_event(workspace: Path) -> None:
    """What docs/targets.md documents and W112 warns about: no `sandbox:` is Codex's read-only."""
    script = [Turn(call=("exec_command", {"cmd": PATCH})), Turn(text="fixed")]
    with ModelScriptServer(script) as server:
        target = _codex(base_url=server.base_url, env={"OPENAI_API_KEY": "sk-local"})
        response = invoke(target, make_request("Fix calc.py", workspace_path=workspace))
    assert _calls(response) == []
    assert (workspace / "calc.py").read_text().endswith("return a - b\n")
    assert "blocked by read-only sandbox" in server.requests[-1].text()


def test_codex_cut_stream_reconnects_and_the_run_succeeds(workspace: Path) -> None:
    script = [Turn(cut=True), Turn(call=("exec_command", LS)), Turn(cut=True), Turn(text="ok")]
    with ModelScriptServer(script) as server:
        target = _codex(base_url=server.base_url, env={"OPENAI_API_KEY": "sk-local"})
        response = invoke(target, make_request("List the files", workspace_path=workspace))
        assert server.cuts == 2
    assert response.text == "ok"
    assert [call.tool for call in _calls(response)] == ["Bash"]


def test_codex_call_that_never_finishes_is_kept_as_unknown(workspace: Path) -> None:
    """A command that outlives `yield_time_ms` leaves Codex's item started, never completed: the call
    is kept with status `unknown` and no duration (a latency check on it fails, test_trajectory)."""
    slow = {"cmd": "sleep 3; echo late", "login": False, "yield_time_ms": 250}
    with ModelScriptServer([Turn(call=("exec_command", slow)), Turn(text="gave up waiting")]) as server:
        target = _codex(base_url=server.base_url, env={"OPENAI_API_KEY": "sk-local"})
        response = invoke(target, make_request("Wait", workspace_path=workspace))
    assert response.text == "gave up waiting"
    (call,) = _calls(response)
    assert (call.tool, call.status, call.duration_ms, call.end_time) == ("Bash", "unknown", None, None)


def test_codex_reads_codex_home_and_openai_base_url(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CODEX_HOME reaches Codex (its config.toml is read); OPENAI_BASE_URL, which Codex ignores,
    is mapped to a provider of its own."""
    with ModelScriptServer([Turn(text="from config.toml")]) as server:
        codex_home = tmp_path / "codex-home"
        codex_home.mkdir()
        (codex_home / "config.toml").write_text(
            'model_provider = "local"\n'
            f'[model_providers.local]\nname = "local"\nbase_url = "{server.base_url}"\n'
            'env_key = "OPENAI_API_KEY"\nwire_api = "responses"\n'
        )
        monkeypatch.setenv("CODEX_HOME", str(codex_home))
        monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
        response = invoke(_codex(), make_request("hi", workspace_path=workspace))
        assert response.text == "from config.toml"
    monkeypatch.delenv("CODEX_HOME")
    with ModelScriptServer([Turn(text="via OPENAI_BASE_URL")]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        response = invoke(_codex(), make_request("hi", workspace_path=workspace))
    assert response.text == "via OPENAI_BASE_URL"


def _copilot(base_url: str) -> CopilotTarget:
    # Only AgentV's fields: no COPILOT_* variable is set by the test.
    config = CopilotConfig(
        executable=_cli("copilot"), model="local-model", base_url=base_url, subprovider="openai",
        api_key="sk-local", timeout_seconds=90,
    )  # fmt: skip
    return CopilotTarget("copilot", config, base_dir=Path.cwd())


def test_copilot_custom_endpoint_from_agentv_fields_with_a_shell_call_and_an_edit(workspace: Path) -> None:
    edit = {"path": str(workspace / "calc.py"), "old_str": "a - b", "new_str": "a + b"}
    script = [Turn(call=("bash", {"command": "ls"})), Turn(call=("edit", edit)), Turn(text="fixed")]
    with ModelScriptServer(script) as server:
        response = invoke(_copilot(server.base_url), make_request("Fix calc.py", workspace_path=workspace))
    assert server.requests and all(r.path == "/v1/chat/completions" for r in server.requests)
    assert response.text == "fixed"
    calls = _calls(response)
    assert [call.tool for call in calls] == ["Bash", "Edit"]  # titled "Running: ls", "Editing PATH"
    assert calls[0].input == {"command": "ls"}
    assert [call.status for call in calls] == ["ok", "ok"], [c.output for c in calls]
    assert (workspace / "calc.py").read_text().endswith("return a + b\n")


def test_copilot_without_credentials_says_how_to_give_them(workspace: Path) -> None:
    config = CopilotConfig(executable=_cli("copilot"), timeout_seconds=60)
    target = CopilotTarget("copilot", config, base_dir=Path.cwd())
    with pytest.raises(TargetError, match=r"Authentication required; hint: .*COPILOT_GITHUB_TOKEN.*base_url"):
        invoke(target, make_request("hi", workspace_path=workspace))


def _pi(base_url: str) -> PiTarget:
    config = PiConfig(
        executable=_cli("pi"), subprovider="openai", model="gpt-4o-mini", api_key="sk-local",
        base_url=base_url, timeout_seconds=90,
    )  # fmt: skip
    return PiTarget("pi", config, base_dir=Path.cwd())


def test_pi_shell_call_through_base_url(workspace: Path) -> None:
    script = [Turn(call=("bash", {"command": "ls"})), Turn(text="calc.py is there")]
    with ModelScriptServer(script) as server:
        response = invoke(_pi(server.base_url), make_request("List the files", workspace_path=workspace))
    assert len(server.requests) == 2  # pi reached the endpoint base_url names (it ignores OPENAI_BASE_URL)
    assert response.text == "calc.py is there"
    (call,) = _calls(response)
    assert (call.tool, call.input, call.status) == ("Bash", {"command": "ls"}, "ok")
    assert "calc.py" in str(call.output)
    assert response.token_usage is not None and response.token_usage.input == 200
    assert response.cost_usd is not None and response.cost_usd > 0  # pi prices gpt-4o-mini itself


@pytest.mark.parametrize("agent", ["codex", "copilot", "pi"])
def test_one_trajectory_fits_every_agent(agent: str, workspace: Path) -> None:
    """The same shell call, native to each CLI, arrives as `Bash` from all three."""
    native = {
        "codex": ("exec_command", LS),
        "copilot": ("bash", {"command": "ls"}),
        "pi": ("bash", {"command": "ls"}),
    }[agent]
    with ModelScriptServer([Turn(call=native), Turn(text="done")]) as server:
        target = {
            "codex": lambda: _codex(base_url=server.base_url, env={"OPENAI_API_KEY": "sk-local"}),
            "copilot": lambda: _copilot(server.base_url),
            "pi": lambda: _pi(server.base_url),
        }[agent]()
        response = invoke(target, make_request("List the files", workspace_path=workspace))
    assert [call.tool for call in _calls(response)] == ["Bash"]
