"""A regex can never hang a run: a per-match time budget ending in a grader error, matching off the
event loop once it takes long (other tests go on), and SIGINT/SIGTERM stopping a real run within a
second while a catastrophic pattern is being matched."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentv_ci.graders import regex_search
from agentv_ci.js_semantics.js_regex import compile_js_regex
from tests.graders.contexts import make_ctx, make_spec, run_spec

EVIL = r"^(a|aa)+$"
VICTIM = "a" * 40 + "b"  # exponential backtracking for EVIL: never finishes unbounded


def test_a_catastrophic_regex_is_a_grader_error_within_its_budget() -> None:
    started, cpu_started = time.monotonic(), time.process_time()
    result = run_spec(make_spec("regex", value=EVIL), make_ctx(VICTIM))
    elapsed, cpu = time.monotonic() - started, time.process_time() - cpu_started
    assert result.error is not None and "did not finish within 2s" in result.error
    assert elapsed > regex_search.REGEX_BUDGET_S - 0.5  # the budget was given in full
    # Cut at the budget, not left to backtrack: the match's CPU time (every thread of this process)
    # stays within it. CPU, not wall time: on a loaded box the wall time stretches, the work does not.
    assert cpu < regex_search.REGEX_BUDGET_S + 1.5, f"{cpu:.1f}s of CPU"


def test_a_catastrophic_field_accuracy_regex_is_a_grader_error() -> None:
    spec = make_spec("field-accuracy", fields=[{"path": "a", "match": "regex", "pattern": EVIL}])
    result = run_spec(spec, make_ctx(json.dumps({"a": VICTIM})))
    assert result.error is not None and "did not finish" in result.error


def test_ordinary_patterns_still_grade_as_before() -> None:
    assert run_spec(make_spec("regex", value=r"^(a|aa)+$"), make_ctx("aaaa")).score == 1.0
    assert run_spec(make_spec("regex", value=r"\d{3}", flags="y"), make_ctx("x123")).score == 0.0


def test_the_event_loop_keeps_running_while_a_long_match_runs() -> None:
    pattern = compile_js_regex(EVIL, None)

    async def main() -> float:
        gaps: list[float] = []

        async def ticker() -> None:
            last = time.monotonic()
            while True:
                await asyncio.sleep(0.01)
                now = time.monotonic()
                gaps.append(now - last)
                last = now

        task = asyncio.ensure_future(ticker())
        with pytest.raises(regex_search.RegexTimeout):
            await regex_search.search(pattern, VICTIM, budget_s=1.0)
        task.cancel()
        return max(gaps)

    assert asyncio.run(main()) < 0.5  # inline, the loop would stall for the whole 1 s budget


def test_a_cancelled_match_returns_at_once() -> None:
    pattern = compile_js_regex(EVIL, None)

    async def main() -> float:
        task = asyncio.ensure_future(regex_search.search(pattern, VICTIM, budget_s=5.0))
        await asyncio.sleep(0.2)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - started

    assert asyncio.run(main()) < 0.1


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_a_run_within_a_second_while_a_regex_runs(tmp_path: Path, sig: signal.Signals) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "targets.yaml").write_text(
        f"targets:\n  - name: default\n    provider: mock\n    response: {VICTIM}\n"
    )
    (tmp_path / "r.eval.yaml").write_text(
        "tests:\n"
        "  - id: fast\n    input: q\n    assertions:\n      - type: contains\n        value: a\n"
        "  - id: evil\n    input: q\n    assertions:\n      - type: regex\n"
        f"        value: '{EVIL}'\n"
    )
    out = tmp_path / "out"
    process = subprocess.Popen(
        [sys.executable, "-m", "agentv_ci", "run", "r.eval.yaml", "-o", str(out), "--workers", "1", "-q"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    index = out / "index.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (index.exists() and index.read_text().strip()):
        time.sleep(0.01)
    time.sleep(0.3)  # the evil match is now running (its budget is 2 s)
    sent = time.monotonic()
    process.send_signal(sig)
    _, stderr = process.communicate(timeout=30)
    latency = time.monotonic() - sent
    assert process.returncode == 130, stderr
    assert latency < 1.0, f"took {latency:.2f}s to stop"
    rows = [json.loads(line) for line in index.read_text().splitlines()]
    # The finished test keeps its row; the one the signal stopped is recorded as not run (the plan).
    assert [(r["test_id"], r["execution_status"]) for r in rows] == [("fast", "ok"), ("evil", "not_run")]
