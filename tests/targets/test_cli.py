from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest

from agentv_ci.errors import TargetError
from agentv_ci.model.result import TargetResponse
from agentv_ci.plugins import TargetRequest
from agentv_ci.targets.cli import CliConfig, CliTarget
from tests.process_groups import assert_cancel_during_spawn_leaves_no_children
from tests.targets.helpers import make_request

PY = sys.executable


def _run(
    tmp_path: Path, command: str, request: TargetRequest | None = None, **config: object
) -> TargetResponse:
    target = CliTarget("agent", CliConfig(command=command, **config), base_dir=tmp_path)  # type: ignore[arg-type]
    return asyncio.run(target.invoke(request or make_request("hi")))


def _script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "agent.py"
    path.write_text(body)
    return path


def test_every_placeholder_reaches_the_command(tmp_path: Path) -> None:
    script = _script(
        tmp_path,
        "import json, sys, os\n"
        "prompt, prompt_file, out, eval_id, attempt, *files = sys.argv[1:]\n"
        "json.dump({'text': json.dumps({'prompt': prompt, 'file_text': open(prompt_file).read(),"
        " 'eval_id': eval_id, 'attempt': attempt, 'files': files, 'cwd': os.getcwd()})}, open(out, 'w'))\n",
    )
    attached = tmp_path / "data file.txt"
    attached.write_text("x")
    request = make_request('it\'s "quoted" $HOME', test_id="case-7", attempt=2, files=[str(attached)])
    response = _run(
        tmp_path,
        f"{PY} {script} {{PROMPT}} {{PROMPT_FILE}} {{OUTPUT_FILE}} {{EVAL_ID}} {{ATTEMPT}} {{FILES}}",
        request,
        cwd=".",
    )
    seen = json.loads(response.text)
    assert seen["prompt"] == 'it\'s "quoted" $HOME'  # shell-quoted, not expanded
    assert seen["file_text"] == 'it\'s "quoted" $HOME'
    assert seen["eval_id"] == "case-7"
    assert seen["attempt"] == "2"
    assert seen["files"] == [str(attached)]
    assert Path(seen["cwd"]) == tmp_path


def test_output_file_with_messages_tool_calls_usage_cost(tmp_path: Path) -> None:
    output = {
        "output": [
            {
                "role": "assistant",
                "content": "calling",
                "tool_calls": [{"tool": "search", "input": {"q": 1}}],
            },
            {"role": "assistant", "content": "final answer"},
        ],
        "token_usage": {"input": 7, "output": 3},
        "cost_usd": 0.25,
        "duration_ms": -5,
    }
    script = _script(tmp_path, f"import json, sys\njson.dump({output!r}, open(sys.argv[1], 'w'))\n")
    response = _run(tmp_path, f"{PY} {script} {{OUTPUT_FILE}}")
    assert response.text == "final answer"
    assert response.messages[0].tool_calls is not None
    assert response.messages[0].tool_calls[0].tool == "search"
    assert response.token_usage is not None and response.token_usage.input == 7
    assert response.cost_usd == 0.25
    assert response.duration_ms is not None and response.duration_ms >= 0  # negative value dropped
    assert response.llm_call_count == 2


def test_plain_text_output(tmp_path: Path) -> None:
    script = _script(tmp_path, "import sys\nopen(sys.argv[1], 'w').write('just text\\n')\n")
    # As AgentV: the file's text as written (a trailing newline kept; CRLF read as LF).
    assert _run(tmp_path, f"{PY} {script} {{OUTPUT_FILE}}").text == "just text\n"
    crlf = _script(tmp_path, "import sys\nopen(sys.argv[1], 'wb').write(b'a\\r\\nb\\r\\n')\n")
    assert _run(tmp_path, f"{PY} {crlf} {{OUTPUT_FILE}}").text == "a\nb\n"


def test_failures_are_target_errors(tmp_path: Path) -> None:
    failing = _script(tmp_path, "import sys\nsys.stderr.write('boom')\nsys.exit(3)\n")
    with pytest.raises(TargetError, match="exited with code 3: boom"):
        _run(tmp_path, f"{PY} {failing} {{OUTPUT_FILE}}")
    with pytest.raises(TargetError, match="did not write"):
        _run(tmp_path, f"{PY} -c pass")
    with pytest.raises(TargetError, match="timed out"):
        _run(tmp_path, f"{PY} -c 'import time; time.sleep(30)'", timeout_seconds=0.3)


def test_cancelling_kills_the_agent_and_leaves_no_open_transport(tmp_path: Path) -> None:
    """Ctrl-C cancels a running agent: its process group is killed and its pipes are closed before the
    loop closes (an unclosed transport is an 'Event loop is closed' traceback at exit)."""
    import gc

    marker = tmp_path / "pid"
    script = _script(
        tmp_path,
        "import os, sys, time\n"
        f"open({str(marker)!r}, 'w').write(str(os.getpid()))\n"
        "sys.stderr.write('working\\n'); sys.stderr.flush()\n"
        "time.sleep(30)\n",
    )
    target = CliTarget("agent", CliConfig(command=f"{PY} {script} {{OUTPUT_FILE}}"), base_dir=tmp_path)

    async def main() -> None:
        task = asyncio.create_task(target.invoke(make_request("hi")))
        while not marker.exists() or not marker.read_text():
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    gc.collect()  # an unclosed subprocess transport complains here (pytest turns that into an error)
    # SIGKILL went to the process group before the cancel returned; the kernel ends the agent when it
    # next gets a core (on a loaded machine it can still show `R` for a moment): gone, or a zombie not
    # yet reaped by init, within 5 s.
    status = Path(f"/proc/{marker.read_text()}/status")
    deadline = time.monotonic() + 5
    while status.exists() and "State:\tZ" not in status.read_text() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not status.exists() or "State:\tZ" in status.read_text()


def test_cancelling_while_the_agent_starts_still_kills_its_process_group(tmp_path: Path) -> None:
    """A cancel that lands while the process is being spawned must not leave the agent's children
    running (they are in their own session, so nothing else would stop them)."""
    assert_cancel_during_spawn_leaves_no_children(
        tmp_path,
        lambda command: CliTarget("agent", CliConfig(command=command), base_dir=tmp_path).invoke(
            make_request("hi")
        ),
        range(6),  # cancel after 0..5 loop iterations: somewhere inside the spawn
    )


def test_placeholders_inside_the_prompt_are_not_substituted(tmp_path: Path) -> None:
    """One pass, as AgentV: a prompt mentioning {OUTPUT_FILE} or {EVAL_ID} reaches the agent verbatim."""
    script = _script(tmp_path, "import json, sys\njson.dump({'text': sys.argv[1]}, open(sys.argv[2], 'w'))\n")
    prompt = "write {OUTPUT_FILE} for {EVAL_ID} then {UNKNOWN}"
    response = _run(tmp_path, f"{PY} {script} {{PROMPT}} {{OUTPUT_FILE}}", make_request(prompt))
    assert response.text == prompt


def test_files_format_basename(tmp_path: Path) -> None:
    script = _script(
        tmp_path, "import json, sys\njson.dump({'text': ' '.join(sys.argv[2:])}, open(sys.argv[1], 'w'))\n"
    )
    attached = tmp_path / "my data.csv"
    attached.write_text("x")
    request = make_request("hi", files=[str(attached)])
    response = _run(
        tmp_path, f"{PY} {script} {{OUTPUT_FILE}} {{FILES}}", request, files_format="{basename}={path}"
    )
    assert response.text == f"my data.csv={attached}"


def test_output_messages_win_over_text_and_text_may_be_a_number(tmp_path: Path) -> None:
    """AgentV reads `output` first (then `text`, stringified when it is not a string)."""
    from agentv_ci.targets.cli import parse_output_file

    both = parse_output_file(
        json.dumps({"text": "ignored", "output": [{"role": "assistant", "content": "A"}]})
    )
    assert both.text == "A"
    assert parse_output_file(json.dumps({"text": 42})).text == "42"


@pytest.mark.parametrize("reported", ["-0.5", "1e999", "NaN", '"0.01"', "true", "null", "[1]", "-1e999"])
def test_a_hostile_cost_in_the_output_file_is_no_cost(reported: str) -> None:
    """A cli agent's `cost_usd` counts only as a finite number >= 0: anything else is no figure, so
    the answer takes the declared price or none (a negative one would cancel what a judge cost)."""
    from agentv_ci.targets.cli import parse_output_file

    # a file that is not JSON at all (NaN) is the answer as plain text: no cost either
    response = parse_output_file(f'{{"text": "ok", "cost_usd": {reported}, "duration_ms": {reported}}}')
    assert response.cost_usd is None and response.duration_ms is None
    assert parse_output_file('{"text": "ok", "cost_usd": 0.25}').cost_usd == 0.25
