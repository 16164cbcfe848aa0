"""Benchmark (b): 1,000 tests against the local OpenAI-compatible fake server (50 ms latency per
request) with `--workers 50`. The ideal is 1,000 / 50 x 50 ms = 1.0 s. Prints the wall time of the
whole `agentv-ci run` process, the run's own duration (summary.json: load + run, no interpreter
start-up or report writing), and their ratios to the ideal (target <= 1.25).

The server runs in its own process so its request handling does not share our interpreter.
Usage: python bench/run_openai_1k.py [--tests N] [--workers N] [--latency S]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SERVER = """
import sys, time
sys.path.insert(0, {repo!r})
from tests.fakes.llm_server import FakeLlmServer
server = FakeLlmServer(latency_s={latency})
server._httpd.socket.listen(1024)  # the default backlog (5) drops bursts of 50 new connections
# http.server writes headers and body separately: without TCP_NODELAY every reply waits ~40 ms for a
# delayed ACK, which would measure the kernel, not agentv-ci.
server._httpd.RequestHandlerClass.disable_nagle_algorithm = True
with server:
    print(server.base_url, flush=True)
    sys.stdin.read()
"""


def write_suite(directory: Path, count: int, base_url: str) -> None:
    (directory / ".agentv").mkdir(parents=True)
    (directory / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: openai\n    model: gpt-4o-mini\n"
        f"    base_url: {base_url}\n    api_key: local-test-key\n    max_retries: 0\n"
    )
    lines = [json.dumps({"id": f"t{i}", "input": f"question {i}"}) for i in range(count)]
    (directory / "bench.jsonl").write_text("\n".join(lines) + "\n")
    (directory / "bench.yaml").write_text(
        "name: openai-bench\nassertions:\n  - type: contains\n    value: 'echo: question'\n"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=50)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--runs", type=int, default=3, help="repeat and report the median")
    args = parser.parse_args()
    ideal = args.tests / args.workers * args.latency
    work = Path(tempfile.mkdtemp(prefix="agentv-ci-bench-http-"))
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER.format(repo=str(REPO), latency=args.latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        write_suite(work / "evals", args.tests, base_url)
        figures: list[tuple[float, float, float]] = []
        for number in range(args.runs):
            out = work / f"out-{number}"
            command = [
                sys.executable, "-m", "agentv_ci", "run", str(work / "evals"), "--workers", str(args.workers),
                "-o", str(out), "--quiet", "--no-fail",
            ]  # fmt: skip
            started = time.perf_counter()
            done = subprocess.run(
                command, cwd=work, env={**os.environ, "CI": "true"}, capture_output=True, text=True
            )
            wall = time.perf_counter() - started
            if done.returncode != 0:
                print(done.stdout[-2000:], done.stderr[-2000:], sep="\n")
                return done.returncode
            rows = [json.loads(line) for line in (out / "index.jsonl").open()]
            passed = sum(1 for r in rows if r["execution_status"] == "ok")
            if passed != args.tests:
                print(f"only {passed} of {args.tests} tests passed")
                return 1
            run_s = json.loads((out / "summary.json").read_text())["duration_ms"] / 1000
            starts = [datetime.fromisoformat(r["start_time"].replace("Z", "+00:00")) for r in rows]
            ends = [datetime.fromisoformat(r["end_time"].replace("Z", "+00:00")) for r in rows]
            figures.append(((max(ends) - min(starts)).total_seconds(), run_s, wall))
        print(f"tests: {args.tests}, workers {args.workers}, server latency {args.latency * 1000:.0f} ms")
        print(f"ideal: {ideal:.2f} s; medians of {args.runs} runs (each run's figure in brackets)")
        labels = (
            "tests in flight (first start -> last end)",
            "run incl. loading + target set-up (summary.json)",
            "whole process (incl. interpreter start-up and reports)",
        )
        for index, label in enumerate(labels):
            values = sorted(f[index] for f in figures)
            median = statistics.median(values)
            each = ", ".join(f"{v:.2f}" for v in values)
            print(f"{label}: {median:.2f} s  ratio {median / ideal:.2f}  [{each}]")
        print("target: ratio <= 1.25")
        print(f"load average while measuring: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        return 0
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
