"""Benchmark: the JUnit report of a run's own rows (as `run` writes it), REF against the work tree.

Each measurement is a child process that writes N passing dry-run-like rows (3 graders each) through
a `ResultsWriter` with its `WrittenRows`, as a run does, then writes the JUnit report of them; only
the report's CPU time is counted. The sides run in turns (one warm-up each), and the report's bytes
must be the same on both sides. Prints the medians, their ratio and the load average.

Usage: python bench/junit_own_rows.py [REF] [--rows 100000] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compare import REPO, Side, default_ref, in_turns, unpack_ref

CHILD = """
import hashlib, io, sys, time
from pathlib import Path
from agentv_ci.model.result import AssertionResult, GraderResult, RunSummary, TestResult
from agentv_ci.reporting.junit import write_junit
from agentv_ci.results.results_file import ResultsWriter
from agentv_ci.results.stored_results import StoredResults
from agentv_ci.results.tally import ResultsTally
from agentv_ci.results.written_rows import WrittenRows

count, directory = int(sys.argv[1]), Path(sys.argv[2])
graders = [
    GraderResult(f"g{k}", "contains", 1.0, "pass", assertions=[AssertionResult(f"has {k}", True, f"{k}")])
    for k in range(3)
]
seen, tally = WrittenRows(), ResultsTally()
index = directory / "index.jsonl"
with ResultsWriter(index, seen) as writer:
    for i in range(count):
        suite = f"bench-{i // 10000}"
        row = TestResult(
            f"t{i % 10000}", suite, "default", 1.0, "ok", verdict="pass", scores=graders,
            duration_ms=0.0, eval_path=f"/evals/{suite}.jsonl", line=i % 10000 + 1,
            input=f"question {i}?", output=f"answer number {i} for {suite}", dry_run=True,
        )
        tally.add(writer.append(row))
rows = StoredResults(index, tally, count=count, unique_keys=True, own=True, written=seen)
summary = RunSummary(results=rows, started_at="2026-01-01T00:00:00Z", dry_run=True)
out = io.StringIO(newline="")
start = time.process_time()
write_junit(summary, out, directory)
print(time.process_time() - start, hashlib.sha256(out.getvalue().encode()).hexdigest())
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ref", nargs="?", default=None, help="the commit to compare with")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    ref = args.ref or default_ref()
    work = Path(tempfile.mkdtemp(prefix="agentv-ci-junit-bench-"))
    digests: dict[str, set[str]] = {}
    try:
        sides = [Side(ref, unpack_ref(ref, work)), Side("work tree", REPO / "src")]
        for side in sides:
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(side.src)], check=True)

        def one(side: Side) -> float:
            directory = work / "run"
            shutil.rmtree(directory, ignore_errors=True)
            directory.mkdir()
            env = {**os.environ, "PYTHONPATH": str(side.src)}
            command = [sys.executable, "-c", CHILD, str(args.rows), str(directory)]
            done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
            cpu, digest = done.stdout.split()
            digests.setdefault(side.label, set()).add(digest)
            return float(cpu)

        load_before = os.getloadavg()[0]
        times = in_turns(sides, args.runs, one)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if len({d for found in digests.values() for d in found}) != 1:
        print(f"the JUnit bytes differ: {digests}")
        return 1
    base, now = (statistics.median(times[side]) for side in sides)
    each = {side.label: ", ".join(f"{t:.3f}" for t in times[side]) for side in sides}
    print(
        f"JUnit of {args.rows:,} own rows: {ref} {base:.3f} s [{each[ref]}], work tree {now:.3f} s "
        f"[{each['work tree']}] CPU; ratio {now / base:.2f}x; bytes identical; "
        f"load {load_before:.2f} -> {os.getloadavg()[0]:.2f} (1 min)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
