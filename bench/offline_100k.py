"""The offline commands at 100k, as whole processes: `grade`, `report` and `validate` (issue 31).

| name | command | target (2 cores) |
|---|---|---|
| grade | `agentv-ci grade bench-0.yaml --responses responses.jsonl` (100k answers, 3 graders) | <= 5 s |
| report | `agentv-ci report out/` (the 100k rows `grade` wrote) | <= 5 s |
| validate | `agentv-ci validate bench.eval.yaml` (`tests: ./dataset.jsonl`, 100k lines) | < AgentV |
| agentv-validate | AgentV 4.42.4's `agentv validate bench.eval.yaml`, on the same files | |

AgentV skips a `.jsonl` or a sidecar `.yaml` named on its command line (it validates `*.eval.yaml`
only), so both tools are given an eval file whose `tests:` names the dataset. The inputs come from
bench/suites.py. Each round runs every command once, in turns, so a change in the machine's load
hits all alike; prints each command's median wall and CPU (user + system) seconds and peak RSS, with
the load average before and after. AgentV is `--agentv-dir`'s `node_modules/.bin/agentv`
(`npm install agentv@4.42.4` there); without it, its row says so.

Usage: python bench/offline_100k.py [--count 100000] [--runs 3] [--agentv-dir /tmp/agentv-ref]
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from suites import write_mock_suites, write_validate_dataset

AGENTV_CI = [sys.executable, "-m", "agentv_ci"]
EVAL_YAML = "name: bench-100k\nexecution:\n  target: default\ntests: ./dataset.jsonl\n"


def measured(command: list[str], cwd: Path) -> tuple[float, float, float, int, str]:
    """(wall s, CPU s, peak RSS MiB, exit code, output) of one child process (its own rusage)."""
    with tempfile.TemporaryFile("w+", encoding="utf-8") as output:
        started = time.perf_counter()
        child = subprocess.Popen(command, cwd=cwd, stdout=output, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        output.seek(0)
        text = output.read()
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, child.returncode, text


def git_init(directory: Path) -> None:
    subprocess.run(["git", "init", "-q", str(directory)], check=True)


def grade_inputs(work: Path, count: int) -> Path:
    directory = write_mock_suites(work / "grade", count, "jsonl", files=1)
    with (directory / "responses.jsonl").open("w", encoding="utf-8") as handle:
        for i in range(count):
            handle.write(json.dumps({"test_id": f"t{i}", "output": f"answer number {i} for suite 0"}) + "\n")
    git_init(directory)
    return directory


def validate_inputs(work: Path, count: int) -> Path:
    directory = work / "validate"
    write_validate_dataset(directory, count)
    (directory / "bench.eval.yaml").write_text(EVAL_YAML)
    git_init(directory)
    return directory


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--agentv-dir", default="/tmp/agentv-ref")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="agentv-ci-offline-"))
    try:
        graded, validated = grade_inputs(work, args.count), validate_inputs(work, args.count)
        expect = f"{args.count} graded: {args.count} passed"

        def grade() -> tuple[float, float, float, int, str]:
            shutil.rmtree(graded / "out", ignore_errors=True)
            command = [*AGENTV_CI, "grade", "bench-0.yaml", "--responses", "responses.jsonl", "-o", "out"]
            return measured(command, graded)

        commands: dict[str, tuple[Callable[[], tuple[float, float, float, int, str]], str]] = {
            "grade": (grade, expect),
            "report": (lambda: measured([*AGENTV_CI, "report", "out"], graded), ""),
            "validate": (
                lambda: measured([*AGENTV_CI, "validate", "bench.eval.yaml"], validated),
                f"{args.count} test(s): 0 error(s)",
            ),
        }
        agentv = Path(args.agentv_dir) / "node_modules" / ".bin" / "agentv"
        if agentv.exists():
            commands["agentv-validate"] = (
                lambda: measured([str(agentv), "validate", "bench.eval.yaml"], validated),
                "Valid: 1",
            )
        else:
            print(f"agentv-validate: AgentV not installed (npm install agentv@4.42.4 in {args.agentv_dir})")
        figures: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
        load_before = os.getloadavg()
        for _ in range(args.runs):
            for name, (run, needle) in commands.items():
                wall, cpu, rss, rc, out = run()
                if rc != 0 or needle not in out:
                    raise SystemExit(f"{name}: exit {rc}, expected {needle!r} in:\n{out[-2000:]}")
                figures[name].append((wall, cpu, rss))
        load_after = os.getloadavg()
        load = f"load {load_before[0]:.2f} -> {load_after[0]:.2f}"
        print(f"{args.count:,} tests, {args.runs} rounds in turns; {load}")
        for name, rows in figures.items():
            wall = statistics.median(r[0] for r in rows)
            cpu = statistics.median(r[1] for r in rows)
            rss = max(r[2] for r in rows)
            print(f"{name:<16} wall {wall:6.2f} s   cpu {cpu:6.2f} s   peak RSS {rss:5.0f} MiB")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
