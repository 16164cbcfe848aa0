"""Rate limits end to end (issue 20): `agentv-ci run` against a real rate-limited server on 127.0.0.1
(a token bucket answering 429 + Retry-After over its limit), with and without limits in targets.yaml."""

from __future__ import annotations

import itertools
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from tests.cli_helpers import run_cli
from tests.fakes.rate_limited_server import RateLimitedServer


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTV_CI_"))}
    env.update(XDG_CACHE_HOME=str(tmp_path / "cache"), CI="true")
    return env


def _suite(directory: Path, name: str, count: int, base_url: str, extra: str = "") -> Path:
    """`directory/.agentv/targets.yaml` (an openai target at `base_url`, `extra` lines added) and an
    eval file of `count` tests that pass when the server echoes them."""
    (directory / ".agentv").mkdir(parents=True)
    (directory / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: openai\n    model: gpt-4o-mini\n"
        f"    base_url: {base_url}\n    api_key: local-test-key\n{extra}"
    )
    tests = "".join(f"  - id: {name}-{i}\n    input: question {i}\n" for i in range(count))
    path = directory / f"{name}.eval.yaml"
    path.write_text(
        f"name: {name}\nassertions:\n  - type: contains\n    value: 'echo: question'\ntests:\n{tests}"
    )
    return path


def _rows(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines() if line.strip()]


def test_two_suites_at_50_workers_finish_without_errors_under_a_50_per_second_limit(tmp_path: Path) -> None:
    """200 tests in two suites (two directories, two targets files, the same endpoint), 50 workers,
    no limits configured: every test passes, the 429s stay bounded, the throttle is shown."""
    with RateLimitedServer(rate=50, burst=10, latency_s=0.02) as server:
        time.sleep(0.2)  # a full bucket
        a = _suite(tmp_path / "a", "alpha", 100, server.base_url)
        b = _suite(tmp_path / "b", "beta", 100, server.base_url)
        started = time.monotonic()
        done = run_cli(
            "run", str(a), str(b), "--workers", "50", "-o", str(tmp_path / "out"),
            cwd=tmp_path, env=_env(tmp_path), timeout=120,
        )  # fmt: skip
        wall = time.monotonic() - started
        limited, answered = server.limited, server.answered
    assert done.returncode == 0, done.stderr
    rows = _rows(tmp_path / "out")
    assert len(rows) == 200
    assert [r for r in rows if r["execution_status"] != "ok"] == []
    assert answered == 200
    # One limiter for both suites learns the limit once: a few dozen 429s, not one per request.
    # (Each worker backing off alone, as before, drew hundreds here.)
    assert 0 < limited <= 120, limited
    assert "THROTTLE default: rate limited" in done.stderr
    assert "rate limits: default answered 429/529" in done.stderr
    assert wall < 20


def test_max_concurrency_holds_across_two_suites(tmp_path: Path) -> None:
    """`max_concurrency: 2` in both suites' targets files: never more than 2 requests in flight at the
    server, though 20 workers run two suites at once."""
    with RateLimitedServer(rate=10_000, burst=10_000, latency_s=0.03) as server:
        a = _suite(tmp_path / "a", "alpha", 12, server.base_url, "    max_concurrency: 2\n")
        b = _suite(tmp_path / "b", "beta", 12, server.base_url, "    max_concurrency: 2\n")
        done = run_cli(
            "run", str(a), str(b), "--workers", "20", "-o", str(tmp_path / "out"),
            cwd=tmp_path, env=_env(tmp_path), timeout=60,
        )  # fmt: skip
        peak, answered = server.max_in_flight, server.answered
    assert done.returncode == 0, done.stderr
    assert answered == 24
    assert peak == 2


def test_max_rpm_spaces_the_requests(tmp_path: Path) -> None:
    """`max_rpm: 600` is one request every 100 ms, whatever the workers."""
    with RateLimitedServer(rate=10_000, burst=10_000, latency_s=0.0) as server:
        suite = _suite(tmp_path / "s", "paced", 11, server.base_url, "    max_rpm: 600\n")
        done = run_cli(
            "run", str(suite), "--workers", "6", "-o", str(tmp_path / "out"),
            cwd=tmp_path, env=_env(tmp_path), timeout=60,
        )  # fmt: skip
        arrivals = list(server.admitted_at)
    assert done.returncode == 0, done.stderr
    assert len(arrivals) == 11
    gaps = [later - earlier for earlier, later in itertools.pairwise(arrivals)]
    # Sent 100 ms apart (six workers unpaced would send six at once). Arrivals are stamped by the
    # server's threads: on a loaded box a stalled stamp shortens the gap after it (and lengthens the
    # one before), so the typical gap is asserted, over ten, and the span with room for the first
    # arrival, which also carries the first connection's setup.
    assert statistics.median(gaps) >= 0.085, gaps
    assert arrivals[-1] - arrivals[0] >= 0.8, gaps


def test_a_429_does_not_spend_max_retries_and_an_http_date_is_honoured(tmp_path: Path) -> None:
    """`max_retries: 0` and a server over its limit answering `Retry-After: <HTTP date>`: the tests
    still pass after waiting, and no retry reaches the server before the date says."""
    with RateLimitedServer(rate=4, burst=1, latency_s=0.0, retry_after="date") as server:
        suite = _suite(tmp_path / "s", "dated", 4, server.base_url, "    max_retries: 0\n")
        done = run_cli(
            "run", str(suite), "--workers", "4", "-o", str(tmp_path / "out"),
            cwd=tmp_path, env=_env(tmp_path), timeout=60,
        )  # fmt: skip
        limited, rejected_until, admitted = server.limited, server.rejected_until, server.admitted_at
    assert done.returncode == 0, done.stderr
    assert [r["execution_status"] for r in _rows(tmp_path / "out")] == ["ok"] * 4
    assert limited >= 1
    # Every request admitted after the first 429 came once that 429's date had passed (dates are
    # whole seconds: the server tells when each was told to come back).
    first_told = min(rejected_until)
    assert all(at >= first_told - 0.05 for at in admitted[1:]), (admitted, rejected_until)


def test_bad_limits_are_located_errors(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "s", "bad", 1, "http://127.0.0.1:9/v1", "    max_concurrency: 0\n")
    done = run_cli("run", str(suite), "-o", str(tmp_path / "out"), cwd=tmp_path, env=_env(tmp_path))
    assert done.returncode == 2, done.stderr
    assert "targets.yaml:7:" in done.stderr
    assert "max_concurrency" in done.stderr
    (tmp_path / "s" / ".agentv" / "targets.yaml").write_text(
        (tmp_path / "s" / ".agentv" / "targets.yaml")
        .read_text()
        .replace("max_concurrency: 0", "max_rpm: fast")
    )
    done = run_cli("run", str(suite), "-o", str(tmp_path / "out"), cwd=tmp_path, env=_env(tmp_path))
    assert done.returncode == 2, done.stderr
    assert "targets.yaml:7:" in done.stderr and "max_rpm" in done.stderr
    assert "Traceback" not in done.stderr
