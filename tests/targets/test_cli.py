from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from agentv_ci.errors import TargetError
from agentv_ci.model.result import TargetResponse
from agentv_ci.plugins import TargetRequest
from agentv_ci.targets.cli import CliConfig, CliTarget
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
    assert _run(tmp_path, f"{PY} {script} {{OUTPUT_FILE}}").text == "just text"


def test_failures_are_target_errors(tmp_path: Path) -> None:
    failing = _script(tmp_path, "import sys\nsys.stderr.write('boom')\nsys.exit(3)\n")
    with pytest.raises(TargetError, match="exited with code 3: boom"):
        _run(tmp_path, f"{PY} {failing} {{OUTPUT_FILE}}")
    with pytest.raises(TargetError, match="did not write"):
        _run(tmp_path, f"{PY} -c pass")
    with pytest.raises(TargetError, match="timed out"):
        _run(tmp_path, f"{PY} -c 'import time; time.sleep(30)'", timeout_seconds=0.3)
