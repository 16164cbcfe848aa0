"""Transient faults do not reach the verdict, and every retry loop ends (issue 26, item 5), through the
CLI in a subprocess against real servers on 127.0.0.1:

- 20 % transient faults (10 % HTTP 500, 5 % 503 + `Retry-After: 1`, 5 % connections reset) on 300
  tests, seeded so that 6 tests meet three faults in a row and none five: every test passes (three
  attempts, the old default, left 6 execution errors);
- a 5xx, 408 or 409 four times in a row is retried to an answer by default (5 attempts); a 4xx
  other than 408/409/429 is asked once;
- a 429 that says "now" (`Retry-After: 0`, `retry-after-ms: 0`, a date in the past) spends a retry:
  the test ends as an execution error after 5 requests, exit 3 (it used to loop for ever);
- a model-API test has a wall-clock deadline by default (`AGENTV_CI_DEFAULT_TIMEOUT`): a server that
  answers 429 + `Retry-After: 1` for ever ends the test at it, exit 3.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from agentv_ci.deadlines import DEFAULT_TIMEOUT_VARIABLE
from tests.cli_helpers import run_cli
from tests.fakes.llm_server import Call, FakeLlmServer, Reply
from tests.fakes.rate_limited_server import Faults, RateLimitedServer

SLACK_S = 10.0  # interpreter start-up on a loaded 2-core box


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "AGENTV_CI_"))}
    return {**env, "XDG_CACHE_HOME": str(tmp_path / "cache"), "CI": "true", **extra}


def _project(root: Path, base_url: str, count: int, extra: str = "") -> Path:
    """An openai target at `base_url` (`extra` lines added) and `count` tests passing on an echo."""
    (root / ".agentv").mkdir(parents=True)
    (root / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: openai\n    model: gpt-4o-mini\n"
        f"    base_url: {base_url}\n    api_key: local-test-key\n{extra}"
    )
    tests = "".join(f"  - id: t{i}\n    input: question {i}\n" for i in range(count))
    path = root / "faults.eval.yaml"
    path.write_text(
        f"name: faults\nassertions:\n  - type: contains\n    value: 'echo: question'\ntests:\n{tests}"
    )
    return path


def _rows(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines() if line.strip()]


def test_twenty_percent_transient_faults_on_300_tests_leave_no_error(tmp_path: Path) -> None:
    faults = Faults(http_500=0.10, http_503=0.05, reset=0.05, seed=13)
    with RateLimitedServer(rate=1e6, burst=1e6, latency_s=0.01, faults=faults) as server:
        suite = _project(tmp_path, server.base_url, 300)
        started = time.monotonic()
        done = run_cli(
            "run", str(suite), "--workers", "50", "-o", str(tmp_path / "out"),
            cwd=tmp_path, env=_env(tmp_path), timeout=120,
        )  # fmt: skip
        wall = time.monotonic() - started
        faulted = dict(server.faulted)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = _rows(tmp_path / "out")
    assert len(rows) == 300
    assert [r["error"] for r in rows if r["execution_status"] != "ok"] == []
    # The seed drew every kind of fault, about a fifth of the requests.
    assert faulted.keys() == {"500", "503", "reset"}, faulted
    assert 50 <= sum(faulted.values()) <= 110, faulted
    # Retry-After: 1 and the backoff set the floor: a few seconds, not a slow run.
    assert wall < 15 + SLACK_S, wall


@pytest.mark.parametrize("status", [500, 502, 503, 504, 529, 408, 409])
def test_a_transient_status_four_times_in_a_row_is_retried_to_an_answer(tmp_path: Path, status: int) -> None:
    with FakeLlmServer() as server:
        server.fail_next(status, times=4)
        suite = _project(tmp_path, server.base_url, 1, "    retry_initial_delay_ms: 10\n")
        done = run_cli("run", str(suite), "-o", str(tmp_path / "out"), cwd=tmp_path, env=_env(tmp_path))
        calls = len(server.calls)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert calls == 5
    assert [r["execution_status"] for r in _rows(tmp_path / "out")] == ["ok"]


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_a_client_error_is_asked_once(tmp_path: Path, status: int) -> None:
    with FakeLlmServer() as server:
        server.fail_next(status, times=5)
        suite = _project(tmp_path, server.base_url, 1, "    retry_initial_delay_ms: 10\n")
        done = run_cli("run", str(suite), "-o", str(tmp_path / "out"), cwd=tmp_path, env=_env(tmp_path))
        calls = len(server.calls)
    assert done.returncode == 3, done.stdout[-2000:] + done.stderr[-2000:]
    assert calls == 1
    [row] = _rows(tmp_path / "out")
    assert row["execution_status"] == "execution_error"
    assert f"HTTP {status}" in row["error"]


@pytest.mark.parametrize(
    "header",
    [
        {"retry-after": "0"},
        {"retry-after-ms": "0"},
        {"retry-after": "Thu, 01 Jan 1970 00:00:00 GMT"},
        {"retry-after": "-5"},
    ],
    ids=["zero", "ms-zero", "past-date", "negative"],
)
def test_a_429_that_says_now_spends_a_retry_and_the_loop_ends(tmp_path: Path, header: dict[str, str]) -> None:
    def always_limited(call: Call) -> Reply:
        return Reply(status=429, headers=header, body={"error": {"message": "slow down"}})

    with FakeLlmServer(always_limited) as server:
        suite = _project(tmp_path, server.base_url, 1, "    retry_initial_delay_ms: 10\n")
        started = time.monotonic()
        done = run_cli(
            "run", str(suite), "-o", str(tmp_path / "out"), cwd=tmp_path, env=_env(tmp_path), timeout=60
        )
        elapsed = time.monotonic() - started
        calls = len(server.calls)
    assert done.returncode == 3, done.stdout[-2000:] + done.stderr[-2000:]
    assert calls == 5  # the default attempts: not thousands
    assert elapsed < 5 + SLACK_S, elapsed
    [row] = _rows(tmp_path / "out")
    assert row["execution_status"] == "execution_error"
    assert "HTTP 429" in row["error"] and "gave up after 5 attempts" in row["error"], row["error"]


def test_a_model_api_test_has_a_default_deadline(tmp_path: Path) -> None:
    """429 + `Retry-After: 1` for ever spends no retry (a rate limit waits), so only the test's
    default deadline ends it: 2 s here, through `AGENTV_CI_DEFAULT_TIMEOUT`."""

    def always_limited(call: Call) -> Reply:
        return Reply(status=429, headers={"retry-after": "1"}, body={"error": {"message": "slow down"}})

    with FakeLlmServer(always_limited) as server:
        suite = _project(tmp_path, server.base_url, 1)
        started = time.monotonic()
        done = run_cli(
            "run", str(suite), "-o", str(tmp_path / "out"), cwd=tmp_path,
            env=_env(tmp_path, **{DEFAULT_TIMEOUT_VARIABLE: "2"}), timeout=60,
        )  # fmt: skip
        elapsed = time.monotonic() - started
        calls = len(server.calls)
    assert done.returncode == 3, done.stdout[-2000:] + done.stderr[-2000:]
    assert elapsed < 2 + SLACK_S, elapsed
    assert 1 <= calls <= 4, calls
    [row] = _rows(tmp_path / "out")
    assert row["execution_status"] == "execution_error"
    assert row["failure_reason_code"] == "timeout"
    assert "timed out after 2s (wall clock)" in row["error"], row["error"]
