"""Code graders, workspace hooks and cli targets run with a scrubbed environment: the allowlist, the
names the invocation passes (`--pass-env`), and what their own configuration sets; no secret of the
runner otherwise. Real child processes."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from agentv_ci.errors import TargetError
from agentv_ci.graders.code_process import run_script
from agentv_ci.running.hooks import HookContext, run_hook
from agentv_ci.security.child_env import child_environment, pass_through
from agentv_ci.targets import cli as cli_target
from agentv_ci.targets.cli import CliConfig, CliTarget
from agentv_ci.targets.subprocesses import drain_tail
from tests.targets.helpers import make_request

PY = sys.executable
RUNNER_SECRETS = {
    "GITHUB_TOKEN": "ghs_runner_token_0123456789",
    "AWS_SECRET_ACCESS_KEY": "aws-secret-0123456789",
    "OPENAI_API_KEY": "sk-runner-0123456789",
    "SOME_OTHER_SETTING": "not a secret, but not asked for either",
}
PRINT_ENV = "import json, os; print(json.dumps(dict(os.environ)))"


@pytest.fixture
def runner_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in RUNNER_SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    monkeypatch.delenv("AGENTV_CI_PASS_ENV", raising=False)


def test_the_allowlist_keeps_what_interpreters_need_and_drops_the_rest() -> None:
    parent = {
        "PATH": "/bin",
        "HOME": "/home/u",
        "LANG": "C",
        "LC_CTYPE": "C",
        "TMPDIR": "/tmp",
        "GITHUB_TOKEN": "x",
        "NPM_TOKEN": "y",
        "RANDOM": "z",
        "AGENTV_CI_PASS_ENV": "NPM_TOKEN, RANDOM",
    }
    env = child_environment({"EXPLICIT": "1", "PATH": "/override"}, parent=parent)
    assert env == {
        "PATH": "/override",
        "HOME": "/home/u",
        "LANG": "C",
        "LC_CTYPE": "C",
        "TMPDIR": "/tmp",
        "NPM_TOKEN": "y",
        "RANDOM": "z",
        "EXPLICIT": "1",
    }


@pytest.mark.usefixtures("runner_env")
def test_a_code_grader_sees_no_secret_of_the_runner(tmp_path: Path) -> None:
    run = asyncio.run(
        run_script(
            [PY, "-c", PRINT_ENV],
            stdin=b"{}",
            cwd=tmp_path,
            timeout_s=30,
            env={"AGENTV_WORKSPACE_PATH": str(tmp_path)},
        )
    )
    seen = json.loads(run.stdout)
    assert not set(RUNNER_SECRETS) & set(seen)
    assert seen["AGENTV_WORKSPACE_PATH"] == str(tmp_path)  # the protocol's variables still arrive
    assert seen["LC_ALL"] == "C.UTF-8" and "PATH" in seen


@pytest.mark.usefixtures("runner_env")
def test_a_name_passed_by_the_invocation_reaches_the_grader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pass_through(["OPENAI_API_KEY"])
    monkeypatch.setenv("AGENTV_CI_PASS_ENV", "SOME_OTHER_SETTING")
    run = asyncio.run(run_script([PY, "-c", PRINT_ENV], stdin=b"", cwd=tmp_path, timeout_s=30))
    seen = json.loads(run.stdout)
    assert seen["OPENAI_API_KEY"] == RUNNER_SECRETS["OPENAI_API_KEY"]
    assert seen["SOME_OTHER_SETTING"] == RUNNER_SECRETS["SOME_OTHER_SETTING"]
    assert "GITHUB_TOKEN" not in seen and "AWS_SECRET_ACCESS_KEY" not in seen


@pytest.mark.usefixtures("runner_env")
def test_a_cli_target_gets_the_variables_its_config_names_and_no_others(tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text(
        "import json, os, sys\njson.dump({'text': json.dumps(dict(os.environ))}, open(sys.argv[1], 'w'))\n"
    )
    config = CliConfig(command=f"{PY} {script} {{OUTPUT_FILE}}", env={"AGENT_KEY": "named-in-config"})
    target = CliTarget("agent", config, base_dir=tmp_path)
    seen = json.loads(asyncio.run(target.invoke(make_request("hi", test_id="t7"))).text)
    assert seen["AGENT_KEY"] == "named-in-config"
    assert seen["AGENTV_EVAL_ID"] == "t7"
    assert not set(RUNNER_SECRETS) & set(seen)
    assert "HOME" in seen and "PATH" in seen


@pytest.mark.usefixtures("runner_env")
def test_a_workspace_hook_gets_the_workspace_env_and_no_secret(tmp_path: Path) -> None:
    out = tmp_path / "env.json"
    command = [PY, "-c", f"import json, os; json.dump(dict(os.environ), open({str(out)!r}, 'w'))"]
    outcome = asyncio.run(
        run_hook(
            command, cwd=tmp_path, context=HookContext(tmp_path, "t", "r"), timeout_ms=30_000, env={"W": "1"}
        )
    )
    assert outcome.ok, outcome.message
    seen = json.loads(out.read_text())
    assert seen["W"] == "1"
    assert not set(RUNNER_SECRETS) & set(seen)


def test_an_agent_flooding_stderr_costs_a_bounded_tail(tmp_path: Path) -> None:
    command = f"{PY} -c \"import sys; sys.stderr.write('x' * 5_000_000 + 'THE END'); sys.exit(3)\""
    target = CliTarget("agent", CliConfig(command=command), base_dir=tmp_path)
    with pytest.raises(TargetError) as caught:
        asyncio.run(target.invoke(make_request("hi")))
    assert "exited with code 3" in caught.value.message and caught.value.message.endswith("THE END")


def test_drain_tail_keeps_only_the_last_bytes() -> None:
    async def feed() -> bytes:
        reader = asyncio.StreamReader()
        for i in range(100):
            reader.feed_data(f"{i:04d}".encode() * 1000)
        reader.feed_eof()
        return await drain_tail(reader, keep=8)

    assert asyncio.run(feed()) == b"00990099"


def test_an_oversized_output_file_is_read_only_in_part_and_json_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli_target, "MAX_OUTPUT_FILE_BYTES", 1000)
    command = f"{PY} -c \"import sys; open(sys.argv[1], 'w').write('y' * 5000)\" {{OUTPUT_FILE}}"
    target = CliTarget("agent", CliConfig(command=command), base_dir=tmp_path)
    response = asyncio.run(target.invoke(make_request("hi")))
    assert response.text == "y" * 1000 and response.answer_bytes == 5000  # the runner's cap marks it
    script = tmp_path / "json_agent.py"
    script.write_text("import json, sys\njson.dump({'text': 'y' * 5000}, open(sys.argv[1], 'w'))\n")
    command = f"{PY} {script} {{OUTPUT_FILE}}"
    target = CliTarget("agent", CliConfig(command=command), base_dir=tmp_path)
    with pytest.raises(TargetError) as caught:
        asyncio.run(target.invoke(make_request("hi")))
    assert "bytes of JSON" in caught.value.message and "more than" in caught.value.message
