"""Every wait has a deadline (issue 19, item 5), through the CLI in a subprocess:

- an OpenAI-compatible server on 127.0.0.1 that drips its answer one byte every 0.5 s (in the headers,
  or in the body after prompt headers) against `timeout_seconds: 2`: the test ends at about 2 s as an
  execution error `timed out after 2s (wall clock)`, exit 3 (it used to run for minutes: each byte
  reset httpx's read timeout);
- the same server as the grader target a code grader asks through the target proxy;
- a `cli` target running `sleep 1000` with no timeout set anywhere ends at the default per-test
  timeout (1800 s, `AGENTV_CI_DEFAULT_TIMEOUT` set to 2 s here) with the same reason, exit 3.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from agentv_ci.deadlines import DEFAULT_TEST_TIMEOUT_S, DEFAULT_TIMEOUT_VARIABLE
from tests.cli_helpers import run_cli
from tests.fakes.drip_server import DripServer

EVAL = """\
tests:
  - id: capital
    input: What is the capital of France?
    assertions:
      - type: contains
        value: Paris
"""
SLACK_S = 10.0  # interpreter start-up and a loaded 2-core box; the drip alone would take over 90 s


def _env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "AGENTV_CI_"))}
    return {**base, "OPENAI_API_KEY": "sk-test-deadline-0123456789", **extra}


def _project(root: Path, targets: str, eval_yaml: str = EVAL) -> Path:
    evals = root / "evals"
    (evals / ".agentv").mkdir(parents=True)
    (evals / ".agentv" / "targets.yaml").write_text(targets, encoding="utf-8")
    (evals / "geo.eval.yaml").write_text(eval_yaml, encoding="utf-8")
    return evals


def _rows(out: Path) -> list[dict[str, object]]:
    lines = (out / "index.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.mark.parametrize("where", ["headers", "body"])
def test_a_dripping_model_server_ends_at_timeout_seconds_as_an_execution_error(
    tmp_path: Path, where: str
) -> None:
    with DripServer(interval_s=0.5, where=where) as drip:
        _project(
            tmp_path,
            "targets:\n  - name: default\n    provider: openai\n"
            f"    base_url: {drip.base_url}\n    model: gpt-test\n"
            "    api_key: ${{ OPENAI_API_KEY }}\n    timeout_seconds: 2\n    max_retries: 0\n",
        )
        started = time.monotonic()
        done = run_cli("run", "evals", "-o", "out", cwd=tmp_path, env=_env(), timeout=60)
        elapsed = time.monotonic() - started
        sent = list(drip.sent)

    assert done.returncode == 3, done.stdout + done.stderr
    assert elapsed < 2 + SLACK_S, elapsed
    [row] = _rows(tmp_path / "out")
    assert row["execution_status"] == "execution_error"
    assert row["failure_reason_code"] == "timeout"
    assert "timed out after 2s (wall clock)" in str(row["error"])
    # The client hung up at about 2 s (4 bytes at 0.5 s each), far from the whole answer.
    assert len(sent) == 1 and sent[0] <= 8, sent
    assert len(drip.answer()) > 150


def test_retries_each_get_the_wall_clock_deadline(tmp_path: Path) -> None:
    """`max_retries: 1`: two attempts of 1 s each, then the error; never the drip's minutes."""
    with DripServer(interval_s=0.5, where="body") as drip:
        _project(
            tmp_path,
            "targets:\n  - name: default\n    provider: openai\n"
            f"    base_url: {drip.base_url}\n    model: gpt-test\n"
            "    api_key: ${{ OPENAI_API_KEY }}\n    timeout_seconds: 1\n    max_retries: 1\n"
            "    retry_initial_delay_ms: 10\n    retry_max_delay_ms: 20\n",
        )
        started = time.monotonic()
        done = run_cli("run", "evals", "-o", "out", cwd=tmp_path, env=_env(), timeout=60)
        elapsed = time.monotonic() - started
        connections = drip.connections

    assert done.returncode == 3, done.stdout + done.stderr
    assert elapsed < 2 + SLACK_S, elapsed
    assert connections == 2
    [row] = _rows(tmp_path / "out")
    assert "timed out after 1s (wall clock) (gave up after 2 attempts)" in str(row["error"])


GRADER = """\
import json, sys
from agentv_ci.api import TargetProxyClient

json.load(sys.stdin)
client = TargetProxyClient.from_environment()
try:
    answer = client.invoke("Is Paris right?")
except Exception as exc:  # the proxy's 500 names the upstream's timeout
    sys.exit(f"proxy: {exc}")
print(json.dumps({"score": 1, "assertions": [{"text": answer.raw_text or "", "passed": True}]}))
"""


def test_a_dripping_grader_target_behind_the_proxy_ends_at_its_deadline(tmp_path: Path) -> None:
    with DripServer(interval_s=0.5, where="body") as drip:
        evals = _project(
            tmp_path,
            "targets:\n  - name: default\n    provider: mock\n    response: Paris\n"
            "    grader_target: judge\n"
            "  - name: judge\n    provider: openai\n"
            f"    base_url: {drip.base_url}\n    model: gpt-test\n"
            "    api_key: ${{ OPENAI_API_KEY }}\n    timeout_seconds: 2\n    max_retries: 0\n",
            EVAL
            + "      - type: code-grader\n"
            + f"        command: [{json.dumps(sys.executable)}, grade.py]\n"
            + "        target: true\n",
        )
        (evals / "grade.py").write_text(GRADER, encoding="utf-8")
        started = time.monotonic()
        done = run_cli("run", "evals", "-o", "out", cwd=tmp_path, env=_env(), timeout=60)
        elapsed = time.monotonic() - started

    assert done.returncode == 3, done.stdout + done.stderr
    assert elapsed < 2 + SLACK_S, elapsed
    [row] = _rows(tmp_path / "out")
    assert row["execution_status"] == "execution_error"
    assert "timed out after 2s (wall clock)" in json.dumps(row)


SLEEPER = (
    "targets:\n  - name: default\n    provider: cli\n    command: sleep 1000 && echo done > {OUTPUT_FILE}\n"
)


def test_a_cli_target_with_no_timeout_anywhere_ends_at_the_default(tmp_path: Path) -> None:
    assert DEFAULT_TEST_TIMEOUT_S == 1800  # what docs/running.md and docs/targets.md say
    docs = Path(__file__).resolve().parents[2] / "docs"
    for page in ("running.md", "targets.md"):
        text = (docs / page).read_text(encoding="utf-8")
        assert "1800 s" in text and DEFAULT_TIMEOUT_VARIABLE in text, page
    _project(tmp_path, SLEEPER)
    started = time.monotonic()
    done = run_cli(
        "run", "evals", "-o", "out", cwd=tmp_path, env=_env(**{DEFAULT_TIMEOUT_VARIABLE: "2"}), timeout=60
    )
    elapsed = time.monotonic() - started

    assert done.returncode == 3, done.stdout + done.stderr
    assert elapsed < 2 + SLACK_S, elapsed
    [row] = _rows(tmp_path / "out")
    assert row["execution_status"] == "execution_error"
    assert row["failure_reason_code"] == "timeout"
    assert "cli target 'default' timed out after 2s (wall clock)" in str(row["error"])


@pytest.mark.parametrize("value", ["0", "soon", "inf"])
def test_a_bad_default_timeout_is_a_usage_error(tmp_path: Path, value: str) -> None:
    _project(tmp_path, SLEEPER)
    done = run_cli(
        "run", "evals", "-o", "out", cwd=tmp_path, env=_env(**{DEFAULT_TIMEOUT_VARIABLE: value}), timeout=60
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert DEFAULT_TIMEOUT_VARIABLE in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out" / "index.jsonl").exists()
