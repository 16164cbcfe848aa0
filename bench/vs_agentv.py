"""The 2,000-test dry run beside AgentV 4.42.4's, on the same eval files, in turns (issue 31).

Both tools get the same ten `bench-N.eval.yaml` files (bench/suites.py, YAML: 200 tests each, three
graders per test: contains, regex, icontains) and the mock target, and run them with `--dry-run`
and 50 workers. Ours writes index.jsonl, JUnit, SARIF and Markdown (as bench/compare.py's dry runs);
AgentV writes its index.jsonl, benchmark.json, timing.json and a directory per test. Each round
runs both once, the order alternating, after one unmeasured warm-up each, so a change in the
machine's load hits both alike. Prints the median wall and CPU (user + system of the process and
its children, from its own rusage) of each, and AgentV's median over ours: the goal is 30x.

AgentV is `--agentv-dir`'s `node_modules/.bin/agentv` (`npm install agentv@4.42.4` there).

Usage: python bench/vs_agentv.py [--count 2000] [--runs 3] [--agentv-dir /tmp/agentv-ref]
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

from offline_100k import measured
from suites import write_mock_suites

FILES = 10


def main() -> int:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--count", type=int, default=2_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--agentv-dir", default="/tmp/agentv-ref")
    args = parser.parse_args()
    agentv = Path(args.agentv_dir) / "node_modules" / ".bin" / "agentv"
    if not agentv.exists():
        print(f"AgentV is not installed: npm install agentv@4.42.4 in {args.agentv_dir}")
        return 2
    work = Path(tempfile.mkdtemp(prefix="agentv-ci-vs-agentv-"))
    try:
        suite = write_mock_suites(work / "evals", args.count, "yaml", files=FILES)
        subprocess.run(["git", "init", "-q", str(suite)], check=True)
        files = [f"bench-{i}.eval.yaml" for i in range(FILES)]
        out = suite / "out"
        ours = [
            sys.executable, "-m", "agentv_ci", "run", *files, "--dry-run", "--workers", "50", "-o", "out",
            "--quiet", "--no-fail", "--junit", "out/junit.xml", "--sarif", "out/results.sarif",
            "--markdown", "out/summary.md",
        ]  # fmt: skip
        theirs = [str(agentv), "eval", "run", *files, "--dry-run", "--workers", "50", "-o", "out"]
        commands = {"agentv-ci": ours, "agentv": theirs}
        figures: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        load_before = os.getloadavg()
        for round_index in range(args.runs + 1):  # round 0: the warm-up, not counted
            order = list(commands) if round_index % 2 == 0 else list(reversed(commands))
            for name in order:
                shutil.rmtree(out, ignore_errors=True)
                wall, cpu, _rss, rc, text = measured(commands[name], suite)
                rows = sum(1 for line in (out / "index.jsonl").open("rb") if line.strip())
                if rc != 0 or rows != args.count:
                    expected = f"expected {args.count}"
                    raise SystemExit(f"{name}: exit {rc}, {rows} rows ({expected}):\n{text[-2000:]}")
                if round_index:
                    figures[name].append((wall, cpu))
        load_after = os.getloadavg()
        load = f"load {load_before[0]:.2f} -> {load_after[0]:.2f}"
        print(f"{args.count:,} tests, {args.runs} rounds in turns; {load}")
        medians = {
            name: (statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows))
            for name, rows in figures.items()
        }
        for name, (wall, cpu) in medians.items():
            print(f"{name:<10} wall {wall:6.2f} s   cpu {cpu:6.2f} s")
        (our_wall, our_cpu), (their_wall, their_cpu) = medians["agentv-ci"], medians["agentv"]
        ratios = f"wall {their_wall / our_wall:.1f}x, cpu {their_cpu / our_cpu:.1f}x"
        print(f"AgentV / agentv-ci: {ratios} (goal 30x)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
