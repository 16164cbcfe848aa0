"""Target and code-grader settings that would make a wait endless or retry forever are located errors
(exit 2, nothing sent), through the real CLI: `max_retries: 9223372036854775807` against a server
that always answers 503 ran until it was killed, `timeout_seconds: .inf` on a `cli` target running
`sleep` turned off the default per-test deadline, and NaN or negative timeouts were accepted."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from tests.fakes.llm_server import FakeLlmServer

EVAL = "tests:\n  - id: t1\n    input: hi\n    assertions: [{type: contains, value: ok}]\n"


def _project(root: Path, target: dict[str, object], eval_text: str = EVAL) -> Path:
    evals = root / "evals"
    (evals / ".agentv").mkdir(parents=True)
    (evals / ".agentv" / "targets.yaml").write_text(json.dumps({"targets": [{"name": "default", **target}]}))
    (evals / "a.eval.yaml").write_text(eval_text)
    return evals


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ({"max_retries": 9223372036854775807}, "Expected `int` <= 20 - at `$.max_retries`"),
        ({"timeout_seconds": float("inf")}, "Expected `float` <= 604800.0 - at `$.timeout_seconds`"),
        ({"timeout_seconds": float("nan")}, "Expected `float` > 0.0 - at `$.timeout_seconds`"),
        ({"timeout_seconds": -5}, "Expected `float` > 0.0 - at `$.timeout_seconds`"),
        ({"retry_max_delay_ms": 1e300}, "Expected `float` <= 600000.0 - at `$.retry_max_delay_ms`"),
        ({"max_connections": 0}, "Expected `int` >= 1 - at `$.max_connections`"),
    ],
)
def test_model_target_waits_and_retries_out_of_bounds_are_located_errors_and_nothing_is_sent(
    tmp_path: Path, llm_server: FakeLlmServer, setting: dict[str, object], message: str
) -> None:
    llm_server.fail_next(503, times=1000)
    target = {"provider": "openai", "base_url": llm_server.base_url, "api_key": "sk-x", "model": "m"}
    evals = _project(tmp_path, {**target, **setting})
    checked = run_cli("validate", str(evals), cwd=tmp_path, timeout=60)
    assert checked.returncode == 2, checked.stdout + checked.stderr
    assert re.search(r"targets\.yaml:\d+:\d+: error\[E206\]: .*" + re.escape(message), checked.stdout)
    refused = run_cli("run", str(evals), "-o", str(tmp_path / "out"), cwd=tmp_path, timeout=60)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert message in refused.stderr
    assert llm_server.calls == []


@pytest.mark.parametrize("timeout", [float("inf"), float("nan"), 0])
def test_a_cli_target_cannot_turn_off_its_deadline(tmp_path: Path, timeout: float) -> None:
    evals = _project(tmp_path, {"provider": "cli", "command": "sleep 600", "timeout_seconds": timeout})
    refused = run_cli("run", str(evals), "-o", str(tmp_path / "out"), cwd=tmp_path, timeout=60)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert re.search(r"targets\.yaml:\d+:\d+: error: .*at `\$\.timeout_seconds`", refused.stderr)


def test_a_code_grader_cannot_turn_off_its_deadline(tmp_path: Path) -> None:
    grader = '{type: code-grader, command: "sleep 600", timeout_seconds: .inf}'
    eval_text = f"tests:\n  - id: t1\n    input: hi\n    assertions: [{grader}]\n"
    evals = _project(tmp_path, {"provider": "cli", "command": "echo ok > {OUTPUT_FILE}"}, eval_text)
    checked = run_cli("validate", str(evals), cwd=tmp_path, timeout=60)
    assert checked.returncode == 2, checked.stdout + checked.stderr
    assert re.search(
        r"a\.eval\.yaml:4:\d+: error\[E202\]: .*<= 604800\.0 - at `\$\.timeout_seconds`", checked.stdout
    )
