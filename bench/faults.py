"""Transient faults do not reach the verdict (issue 26): N tests against a fault-injecting server.

The server is bench/rate_limits.py's (tests/fakes/rate_limited_server.py in its own process on
127.0.0.1, 50 ms per answer), here without a rate limit. Faulty runs answer 20 % of the requests
with a transient fault: 10 % HTTP 500, 5 % HTTP 503 with `Retry-After: 1`, 5 % the connection reset
before any answer (each run draws them from its own seed). Each cell runs N tests at `--workers` W,
fault-free and faulty, for agentv-ci and promptfoo 0.123.1 side by side (the same harness as
bench/rate_limits.py; promptfoo needs Node >= 22.22: --node), and prints the median wall and the
most errors of any run.

Goal for agentv-ci (its rows say `met` or `MISSED`): at most 1 error per 1,000 tests, and a faulty
run's wall within 1.5x the fault-free one, or 5 s more when the fault-free run is under 10 s.

Usage: python bench/faults.py [--tests 500,1000] [--workers 50] [--runs 3]
       [--tools agentv-ci,promptfoo] [--promptfoo-dir DIR] [--node NODE]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rate_limits import RUNNERS, Cell, Server, _missing

FAULTS = "0.10,0.05,0.05"  # shares of HTTP 500, HTTP 503 + Retry-After: 1, connections reset
UNLIMITED = 1_000_000  # the server's rate: no rate limit, only faults


@dataclass
class Row:
    tool: str
    tests: int
    faulty: bool
    errors: int | None = None  # the most of any run
    wall: float | None = None  # the median
    faults: int | None = None  # faults the server sent (median)
    note: str = ""


def _run_once(
    tool: str, tests: int, workers: int, faulty: bool, seed: int, work: Path, args: argparse.Namespace
) -> tuple[Cell, int]:
    cell = Cell(tool, UNLIMITED, workers, tests)
    server = Server(UNLIMITED, faults=FAULTS if faulty else "", seed=seed)
    try:
        RUNNERS[tool](work, cell, server.base_url, args)
    except subprocess.TimeoutExpired:
        cell.note = "timed out"
    finally:
        server.stop()
    sent = sum(int(server.stats.get(kind, 0)) for kind in ("500", "503", "reset"))
    return cell, sent


def measure(tool: str, tests: int, faulty: bool, work: Path, args: argparse.Namespace) -> Row:
    row = Row(tool, tests, faulty)
    runs = [_run_once(tool, tests, args.workers, faulty, seed, work, args) for seed in range(args.runs)]
    timed = [(cell, sent) for cell, sent in runs if cell.wall is not None]
    row.note = "; ".join(sorted({cell.note for cell, _ in runs if cell.note}))
    if timed:
        row.wall = statistics.median(cell.wall or 0.0 for cell, _ in timed)
        row.errors = max(cell.errors or 0 for cell, _ in timed)
        row.faults = round(statistics.median(sent for _, sent in timed))
        walls = ", ".join(f"{cell.wall:.2f}" for cell, _ in timed)
        row.note = "; ".join(n for n in (row.note, f"runs {walls} s") if n)
    return row


def verdict(faulty: Row, clean: Row) -> str:
    """`met` when `faulty` keeps the goal against the fault-free `clean` run of the same size."""
    if faulty.wall is None or clean.wall is None or faulty.errors is None:
        return "-"
    allowed = max(1.5 * clean.wall, clean.wall + 5.0) if clean.wall < 10 else 1.5 * clean.wall
    few_errors = faulty.errors * 1000 <= faulty.tests
    return "met" if few_errors and faulty.wall <= allowed else f"MISSED (wall allowed {allowed:.2f} s)"


def _print(row: Row, goal: str) -> None:
    cells = [row.tool, str(row.tests), "20 %" if row.faulty else "none"]
    if row.wall is None:
        cells += ["-", "-", "-", goal, row.note or "no run finished"]
    else:
        cells += [str(row.errors), f"{row.wall:.2f} s", str(row.faults), goal, row.note]
    print("| " + " | ".join(cells) + " |", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", default="500,1000")
    parser.add_argument("--workers", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3, help="runs per cell (median wall, most errors)")
    parser.add_argument("--tools", default="agentv-ci,promptfoo")
    parser.add_argument("--promptfoo-dir", default=os.environ.get("PROMPTFOO_DIR", "/work/tools/promptfoo"))
    parser.add_argument("--node", default=os.environ.get("PROMPTFOO_NODE", "node"))
    args = parser.parse_args()
    tools = [t for t in args.tools.split(",") if t]
    for tool in tools:
        if tool not in ("agentv-ci", "promptfoo"):
            raise SystemExit(f"unknown tool {tool!r} (known: agentv-ci, promptfoo)")
    skipped = {tool: why for tool in tools if (why := _missing(tool, args)) is not None}
    for tool, why in skipped.items():
        print(f"skipping {tool}: {why}", file=sys.stderr)
    if "agentv-ci" in tools:  # bytecode, as an installed agentv-ci has (see bench/rate_limits.py)
        import agentv_ci

        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", str(Path(agentv_ci.__file__).parent)], check=True
        )
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    nproc = len(os.sched_getaffinity(0))
    print(f"fault bench: {os.cpu_count()} CPUs (nproc {nproc}), load average {load}, {when}")
    print(
        "server: 50 ms per answer, no rate limit; faulty: 10 % HTTP 500, 5 % 503 + Retry-After: 1, 5 % reset"
    )
    print(f"--workers {args.workers}; {args.runs} run(s) per cell: median wall, errors the most of any run\n")
    print("| tool | tests | faults | errors | wall | faults sent | goal | note |")
    print("|---|---|---|---|---|---|---|---|")
    missed = False
    with tempfile.TemporaryDirectory(prefix="agentv-ci-faults-") as scratch:
        work = Path(scratch)
        for tests in (int(n) for n in args.tests.split(",")):
            for tool in tools:
                if tool in skipped:
                    _print(Row(tool, tests, True, note="not installed"), "-")
                    continue
                clean = measure(tool, tests, False, work, args)
                _print(clean, "-")
                faulty = measure(tool, tests, True, work, args)
                goal = verdict(faulty, clean)
                _print(faulty, goal)
                missed |= tool == "agentv-ci" and goal != "met"
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\nended {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}, load average {load}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
