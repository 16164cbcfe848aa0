"""Full speed under a rate limit (issue 20): N tests against a rate-limited OpenAI-compatible server.

The server (tests/fakes/rate_limited_server.py, its own process on 127.0.0.1) is a token bucket of
L requests/s with a burst of 10, answering 429 with `Retry-After: 1` over the limit and taking 50 ms
per answer (JSON, or server-sent events for `stream: true`). Each cell runs N = SCALE x L tests at
`--workers` W with no limits configured, and prints errors, wall time and the ratio to N / L (the
least time the limit allows). Target for agentv-ci: 0 errors and ratio <= 1.1 in every cell.

Peers, side by side against the same server (skipped, with a message, when not installed):
- AgentV 4.42.4: `npm install agentv@4.42.4` in a directory given by --agentv-dir (its bin/agentv);
  an `openai` target with `base_url` at the server; `--workers` W (AgentV caps it at 50).
- promptfoo 0.123.1: `npm install promptfoo@0.123.1` in --promptfoo-dir; `openai:chat` with
  `apiBaseUrl` at the server; `--max-concurrency` W. It needs Node >= 22.22: --node names one.

A cell with W x 20 < L cannot reach the limit at all (each worker waits 50 ms per answer): its
floor column says the least time W workers need.

Each cell runs `--runs` times (3 by default): the row shows the median wall, span and 429 count, and
the most errors any run had.

Usage: python bench/rate_limits.py [--rates 20,100,500] [--workers 10,50,200] [--scale 5] [--runs 3]
       [--tools agentv-ci,agentv,promptfoo] [--agentv-dir DIR] [--promptfoo-dir DIR] [--node NODE]
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
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LATENCY_S = 0.05
AGENTV_MAX_WORKERS = 50


@dataclass
class Cell:
    tool: str
    rate: int
    workers: int
    tests: int
    errors: int | None = None
    wall: float | None = None
    limited: int | None = None  # 429s the server sent
    span: float | None = None  # first test's start to last test's end (agentv-ci's rows)
    note: str = ""

    def row(self) -> str:
        ideal = self.tests / self.rate
        floor = max(ideal, self.tests * LATENCY_S / self.workers)
        if self.wall is None:
            head = f"| {self.tool} | {self.rate} | {self.workers} | {self.tests} |"
            return f"{head} - | - | - | - | - | - | {self.note} |"
        ratio = self.wall / ideal
        span = f"{self.span:.2f} s ({self.span / ideal:.2f}x)" if self.span is not None else "-"
        return (
            f"| {self.tool} | {self.rate} | {self.workers} | {self.tests} | {self.errors} | "
            f"{self.wall:.2f} s | {ratio:.2f}x | {span} | {floor / ideal:.2f}x | {self.limited} | "
            f"{self.note} |"
        )


class Server:
    """The rate-limited server in its own process; `stop()` returns (answered, limited) and keeps
    every count it printed in `stats`. `faults`: shares of 500, 503 and resets ("0.1,0.05,0.05")."""

    def __init__(self, rate: int, *, faults: str = "", seed: int = 0) -> None:
        burst = "10" if rate < 1_000_000 else str(rate)
        self.stats: dict[str, int] = {}
        command = [sys.executable, "-m", "tests.fakes.rate_limited_server", str(rate)]
        command += ["--latency", str(LATENCY_S), "--burst", burst]
        if faults:
            command += ["--faults", faults, "--seed", str(seed)]
        self.process = subprocess.Popen(
            command,
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.base_url = self.process.stdout.readline().strip()
        time.sleep(1.1)  # a full bucket, as a server that was idle

    def stop(self) -> tuple[int, int]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        self.stats = json.loads(self.process.stdout.readline() or "{}")
        self.process.wait(timeout=30)
        return int(self.stats.get("answered", 0)), int(self.stats.get("limited", 0))


def _eval_yaml(count: int) -> str:
    lines = [
        "name: rate-bench",
        "assertions:",
        "  - type: contains",
        "    value: 'echo: question'",
        "tests:",
    ]
    for i in range(count):
        lines += [f"  - id: t{i}", f"    criteria: echoes question {i}", f"    input: question {i}"]
    return "\n".join(lines) + "\n"


def _targets_yaml(base_url: str) -> str:
    """AgentV takes each field of a model target from an environment variable: so do both here."""
    return (
        "targets:\n  - name: default\n    provider: openai\n    model: ${{ BENCH_MODEL }}\n"
        "    base_url: ${{ BENCH_BASE_URL }}\n    api_key: ${{ OPENAI_API_KEY }}\n"
    )


def _env(base_url: str) -> dict[str, str]:
    env = {**os.environ, "CI": "true", "OPENAI_API_KEY": "local-bench-key", "BENCH_BASE_URL": base_url}
    env["BENCH_MODEL"] = "gpt-4o-mini"
    return env


def _project(work: Path, count: int, base_url: str) -> Path:
    project = work / f"project-{count}"
    shutil.rmtree(project, ignore_errors=True)
    (project / ".agentv").mkdir(parents=True)
    (project / ".agentv" / "targets.yaml").write_text(_targets_yaml(base_url))
    (project / "bench.eval.yaml").write_text(_eval_yaml(count))
    return project


def _timed(command: list[str], cwd: Path, env: dict[str, str], timeout: float) -> tuple[float, int, str]:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    return time.perf_counter() - started, done.returncode, done.stdout + done.stderr


def run_agentv_ci(work: Path, cell: Cell, base_url: str, args: argparse.Namespace) -> None:
    project = _project(work, cell.tests, base_url)
    out = project / "out"
    command = [sys.executable, "-m", "agentv_ci", "run", str(project / "bench.eval.yaml")]
    command += ["--workers", str(cell.workers), "-o", str(out), "--quiet", "--no-fail"]
    env = _env(base_url)
    cell.wall, code, _ = _timed(command, project, env, timeout=600)
    rows = [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines() if line.strip()]
    ok = sum(1 for row in rows if row.get("execution_status") in ("ok", "quality_failure"))
    cell.errors = cell.tests - ok
    starts = [datetime.fromisoformat(r["start_time"].replace("Z", "+00:00")) for r in rows]
    ends = [datetime.fromisoformat(r["end_time"].replace("Z", "+00:00")) for r in rows]
    if starts:
        cell.span = (max(ends) - min(starts)).total_seconds()
    if code not in (0, 1):
        cell.note = f"exit {code}"


def run_agentv(work: Path, cell: Cell, base_url: str, args: argparse.Namespace) -> None:
    binary = Path(args.agentv_dir) / "node_modules" / ".bin" / "agentv"
    project = _project(work, cell.tests, base_url)
    out = project / "out"
    workers = min(cell.workers, AGENTV_MAX_WORKERS)
    command = [str(binary), "eval", "run", "bench.eval.yaml", "--workers", str(workers), "-o", str(out)]
    command += ["--no-cache"]
    env = _env(base_url)
    cell.wall, code, output = _timed(command, project, env, timeout=900)
    index = out / "index.jsonl"
    if not index.is_file():
        cell.errors = cell.tests
        cell.note = f"no index.jsonl (exit {code}): {output.strip().splitlines()[-1:]}"
        return
    rows = [json.loads(line) for line in index.read_text().splitlines() if line.strip()]
    ok = sum(
        1 for row in rows if not row.get("error") and row.get("execution_status", "ok") != "execution_error"
    )
    cell.errors = cell.tests - ok
    if workers != cell.workers:
        cell.note = f"--workers {workers} (AgentV's maximum)"


def run_promptfoo(work: Path, cell: Cell, base_url: str, args: argparse.Namespace) -> None:
    entry = Path(args.promptfoo_dir) / "node_modules" / "promptfoo" / "dist" / "src" / "entrypoint.js"
    project = work / f"promptfoo-{cell.tests}"
    shutil.rmtree(project, ignore_errors=True)
    project.mkdir()
    tests = "\n".join(f"  - vars: {{q: 'question {i}'}}" for i in range(cell.tests))
    (project / "promptfooconfig.yaml").write_text(
        "prompts:\n  - '{{q}}'\n"
        "providers:\n  - id: openai:chat:gpt-4o-mini\n    config:\n"
        f"      apiBaseUrl: {base_url}\n      apiKey: local-bench-key\n"
        "defaultTest:\n  assert:\n    - type: contains\n      value: 'echo: question'\n"
        f"tests:\n{tests}\n"
    )
    out = project / "results.json"
    command = [args.node, str(entry), "eval", "-c", "promptfooconfig.yaml", "--no-cache", "--no-table"]
    command += ["--no-progress-bar", "--max-concurrency", str(cell.workers), "-o", str(out)]
    env = {**os.environ, "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1"}
    env.update(PROMPTFOO_CONFIG_DIR=str(project / ".promptfoo"), OPENAI_API_KEY="local-bench-key")
    cell.wall, code, output = _timed(command, project, env, timeout=900)
    if not out.is_file():
        cell.errors = cell.tests
        cell.note = f"no results (exit {code}): {output.strip().splitlines()[-1:]}"
        return
    stats = json.loads(out.read_text()).get("results", {}).get("stats", {})
    cell.errors = int(stats.get("errors", 0)) + max(
        0,
        cell.tests
        - int(stats.get("successes", 0))
        - int(stats.get("failures", 0))
        - int(stats.get("errors", 0)),
    )


def _missing(tool: str, args: argparse.Namespace) -> str | None:
    """Why `tool` cannot run here (None when it can)."""
    if tool == "agentv":
        binary = Path(args.agentv_dir) / "node_modules" / ".bin" / "agentv"
        if not binary.exists():
            return f"AgentV not installed: run `npm install agentv@4.42.4` in {args.agentv_dir}"
    if tool == "promptfoo":
        entry = Path(args.promptfoo_dir) / "node_modules" / "promptfoo" / "dist" / "src" / "entrypoint.js"
        if not entry.exists():
            return f"promptfoo not installed: run `npm install promptfoo@0.123.1` in {args.promptfoo_dir}"
        try:
            version = subprocess.run([args.node, "--version"], capture_output=True, text=True).stdout
        except OSError:
            return f"promptfoo needs Node >= 22.22: {args.node} cannot be run (pass --node)"
        major, minor = (int(p) for p in version.strip().lstrip("v").split(".")[:2])
        if (major, minor) < (22, 22):
            return f"promptfoo 0.123.1 needs Node >= 22.22, {args.node} is {version.strip()} (pass --node)"
    return None


RUNNERS: dict[str, Callable[[Path, Cell, str, argparse.Namespace], None]] = {
    "agentv-ci": run_agentv_ci,
    "agentv": run_agentv,
    "promptfoo": run_promptfoo,
}


def _run_once(tool: str, limit: int, model: Cell, work: Path, args: argparse.Namespace) -> Cell:
    cell = Cell(model.tool, model.rate, model.workers, model.tests)
    server = Server(limit or 1_000_000)
    try:
        RUNNERS[tool](work, cell, server.base_url, args)
    except subprocess.TimeoutExpired:
        cell.note = "timed out"
    finally:
        _, cell.limited = server.stop()
    return cell


def _median_into(cell: Cell, runs: list[Cell]) -> None:
    """The row of `runs` of one cell: median wall, span and 429s; the most errors of any run."""
    timed = [r for r in runs if r.wall is not None]
    cell.note = "; ".join(sorted({r.note for r in runs if r.note}))
    if not timed:
        return
    cell.wall = statistics.median(r.wall for r in timed if r.wall is not None)
    spans = [r.span for r in timed if r.span is not None]
    cell.span = statistics.median(spans) if spans else None
    cell.errors = max(r.errors or 0 for r in timed)
    cell.limited = round(statistics.median(r.limited or 0 for r in timed))
    if len(timed) > 1:
        walls = ", ".join(f"{r.wall / (cell.tests / cell.rate):.2f}" for r in timed if r.wall is not None)
        cell.note = "; ".join(n for n in (cell.note, f"runs {walls}x") if n)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", default="20,100,500")
    parser.add_argument("--workers", default="10,50,200")
    parser.add_argument("--scale", type=float, default=5.0, help="N = scale x L tests per cell")
    parser.add_argument("--runs", type=int, default=3, help="runs per cell (the row shows medians)")
    parser.add_argument("--tools", default="agentv-ci,agentv,promptfoo")
    parser.add_argument("--agentv-dir", default=os.environ.get("AGENTV_DIR", "/work/tools/agentv"))
    parser.add_argument("--promptfoo-dir", default=os.environ.get("PROMPTFOO_DIR", "/work/tools/promptfoo"))
    parser.add_argument("--node", default=os.environ.get("PROMPTFOO_NODE", "node"))
    parser.add_argument(
        "--reference", action="store_true", help="also run agentv-ci against the server with no limit"
    )
    args = parser.parse_args()
    rates = [int(r) for r in args.rates.split(",")]
    worker_counts = [int(w) for w in args.workers.split(",")]
    tools = [t for t in args.tools.split(",") if t]
    for tool in tools:
        if tool not in RUNNERS:
            raise SystemExit(f"unknown tool {tool!r} (known: {', '.join(RUNNERS)})")
    skipped = {tool: why for tool in tools if (why := _missing(tool, args)) is not None}
    for tool, why in skipped.items():
        print(f"skipping {tool}: {why}", file=sys.stderr)
    if "agentv-ci" in tools:
        # An installed agentv-ci has its bytecode (pip compiles it); a checkout run with
        # PYTHONDONTWRITEBYTECODE=1 would compile every module again in every run (~0.1 s).
        import agentv_ci

        package = Path(agentv_ci.__file__).parent
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], check=True)
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    nproc = len(os.sched_getaffinity(0))
    print(f"rate-limit bench: {os.cpu_count()} CPUs (nproc {nproc}), load average {load}, {when}")
    print(f"{args.runs} run(s) per cell: median wall, span and 429s; errors: the most of any run")
    print(f"server: token bucket L req/s, burst 10, 429 + Retry-After: 1, {LATENCY_S * 1000:.0f} ms/answer")
    print()
    columns = ["tool", "L (req/s)", "workers", "N", "errors", "wall", "wall / (N/L)", "in-run span"]
    columns += ["floor", "429s", "note"]
    print("| " + " | ".join(columns) + " |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    failed = False
    with tempfile.TemporaryDirectory(prefix="agentv-ci-rl-") as scratch:
        work = Path(scratch)
        for rate in rates:
            count = int(args.scale * rate)
            for workers in worker_counts:
                runs = [(tool, rate) for tool in tools]
                if args.reference and "agentv-ci" in tools:
                    runs.insert(1, ("agentv-ci", 0))
                for tool, limit in runs:
                    cell = Cell(
                        tool if limit else "agentv-ci, no limit (machine floor)", rate, workers, count
                    )
                    if tool in skipped:
                        cell.note = "not installed"
                        print(cell.row(), flush=True)
                        continue
                    runs_done = [_run_once(tool, limit, cell, work, args) for _ in range(args.runs)]
                    _median_into(cell, runs_done)
                    print(cell.row(), flush=True)
                    if tool == "agentv-ci" and limit and cell.wall is not None:
                        floor = max(count / rate, count * LATENCY_S / workers)
                        failed |= bool(cell.errors) or cell.wall > 1.1 * floor
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\nended {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}, load average {load}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
