"""Benchmark (a): 10,000 tests, mock target (`--dry-run`), three deterministic graders, all result
files written (index.jsonl, summary.json, JUnit, SARIF, Markdown). Prints wall time and peak RSS of
the `agentv-ci run` process and the ratios against AgentV 4.42.4 on the same work: the issue's
~30 s / ~400 MB, and the 54 s / 688 MB the lead measured on this machine with the YAML workload.

Usage: python bench/run_mock_10k.py [--tests N] [--format jsonl|yaml] [--keep]
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from suites import write_mock_suites

# Two AgentV 4.42.4 references for the same work (`--dry-run --workers 50`): the figure the issue
# states, and what the lead measured on this machine with this YAML workload.
AGENTV_REFERENCES = (
    ("issue's stated AgentV figure", 30.0, 400.0),
    ("AgentV measured here by the lead, same YAML workload", 54.0, 688.0),
)


def write_suite(directory: Path, count: int, fmt: str) -> Path:
    """Ten suites (files) of count/10 tests: each test has contains + regex + icontains graders."""
    return write_mock_suites(directory, count, fmt)


def run_once(work: Path, fmt: str, count: int, workers: int) -> tuple[float, float, int, list[str]]:
    """One `agentv-ci run` subprocess: (wall seconds, peak RSS MB, result rows, files written)."""
    suite_dir = work / f"evals-{fmt}"
    if not suite_dir.exists():
        write_suite(suite_dir, count, fmt)
    out = work / f"out-{fmt}"
    shutil.rmtree(out, ignore_errors=True)
    command = [
        sys.executable, "-m", "agentv_ci", "run", str(suite_dir), "--dry-run",
        "--workers", str(workers), "-o", str(out), "--quiet", "--no-fail",
        "--junit", str(out / "junit.xml"), "--sarif", str(out / "results.sarif"),
        "--markdown", str(out / "summary.md"),
    ]  # fmt: skip
    # Each run in a fresh child of a fresh helper, so RUSAGE_CHILDREN's peak is this run's alone.
    helper = (
        "import resource, subprocess, sys, time, json\n"
        "t = time.perf_counter()\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "wall = time.perf_counter() - t\n"
        "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
        "print(json.dumps({'wall': wall, 'rss': rss, 'rc': p.returncode, 'err': p.stderr[-2000:]}))\n"
    )
    env = {**os.environ, "CI": "true"}
    done = subprocess.run(
        [sys.executable, "-c", helper, *command], cwd=work, env=env, capture_output=True, text=True
    )
    figures = json.loads(done.stdout)
    if figures["rc"] != 0:
        raise SystemExit(f"agentv-ci run failed ({figures['rc']}):\n{figures['err']}")
    rows = sum(1 for _ in (out / "index.jsonl").open("rb"))
    return figures["wall"], figures["rss"], rows, sorted(p.name for p in out.iterdir())


PHASES = """
import asyncio, os, sys, time
from pathlib import Path
from agentv_ci.gating import GateOptions, decide
from agentv_ci.grading import grade_test
from agentv_ci.plugins import TargetRequest
from agentv_ci.prompting import render_input
from agentv_ci.reporting import write_reports
from agentv_ci.results.results_file import ResultsWriter, summary_from_results, write_summary_json
from agentv_ci.running.plan import PlanOptions, plan_jobs
from agentv_ci.running.scheduler import Runner, RunnerOptions
from agentv_ci.running.session import load_selected_suites
from agentv_ci.targets.mock import MockConfig, MockTarget

suite_dir, out = Path(sys.argv[1]), Path(sys.argv[2])
clock = [time.perf_counter()]
def lap():
    now = time.perf_counter(); spent = now - clock[0]; clock[0] = now; return spent
suites = load_selected_suites([suite_dir], None); load = lap()
jobs = plan_jobs(suites, PlanOptions()); plan = lap()
results = []
with ResultsWriter(out / "index.jsonl") as writer:
    def sink(result):
        writer.append(result); results.append(result)
    asyncio.run(Runner(jobs, RunnerOptions(workers=50, dry_run=True), sink).run())
run = lap()
summary = summary_from_results(results); write_summary_json(out / "summary.json", summary)
decision = decide(summary, GateOptions()); summary_s = lap()
timings = {}
for name in ("junit", "sarif", "markdown"):
    write_reports(summary, repo_root=Path.cwd(), decision=decision, **{name: out / name})
    timings[name] = lap()
mock = MockTarget("m", MockConfig(dry_run=True), base_dir=Path.cwd())
async def grade_only():
    pairs = []
    for job in jobs:
        request = TargetRequest(test=job.test, messages=job.test.input, prompt=render_input(job.test.input),
                                eval_path=Path(job.suite.path))
        pairs.append((job, await mock.invoke(request)))
    lap()
    for job, response in pairs:
        await grade_test(job.test, response, target="m", eval_path=Path(os.path.relpath(job.suite.path)),
                         threshold=0.8, dry_run=True)
asyncio.run(grade_only()); grading = lap()
print(f"   phases in one process: load {load:.2f} s, plan {plan:.2f} s, run (target + grading + index.jsonl) "
      f"{run:.2f} s [grade_test alone, sequential: {grading:.2f} s], summary+gate {summary_s:.2f} s, "
      f"junit {timings['junit']:.2f} s, sarif {timings['sarif']:.2f} s, markdown {timings['markdown']:.2f} s")
"""


def print_phases(work: Path, fmt: str) -> None:
    """Where the time goes, measured in one process (attribution, not the headline figure)."""
    out = work / f"phases-{fmt}"
    out.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", PHASES, str(work / f"evals-{fmt}"), str(out)],
        cwd=work,
        capture_output=True,
        text=True,
    )
    print(done.stdout.rstrip() or f"   (phase breakdown failed: {done.stderr[-500:]})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=10_000)
    parser.add_argument("--format", choices=("jsonl", "yaml", "both"), default="both")
    parser.add_argument("--workers", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3, help="repeat and report the median")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    formats = ("jsonl", "yaml") if args.format == "both" else (args.format,)
    work = Path(tempfile.mkdtemp(prefix="agentv-ci-bench-"))
    ok = True
    try:
        for fmt in formats:
            runs = [run_once(work, fmt, args.tests, args.workers) for _ in range(args.runs)]
            walls = sorted(r[0] for r in runs)
            rss = max(r[1] for r in runs)
            wall = statistics.median(walls)
            rows, files = runs[-1][2], runs[-1][3]
            ok = ok and rows == args.tests
            shape = f"{fmt}, 10 files, 3 deterministic graders each"
            print(f"== {args.tests} tests ({shape}), mock target via --dry-run, workers {args.workers}")
            print(f"   result rows: {rows}; files: {', '.join(files)}")
            each = ", ".join(f"{w:.2f}" for w in walls)
            print(f"   wall time (median of {args.runs}): {wall:.2f} s  [{each}]")
            print(f"   peak RSS: {rss:.0f} MB")
            for label, seconds, megabytes in AGENTV_REFERENCES:
                print(
                    f"   vs {label} ({seconds:.0f} s, {megabytes:.0f} MB): {seconds / wall:.1f}x faster "
                    f"(target >= 20x), {rss / megabytes:.2f} of its memory (target < 0.33)"
                )
            print(f"   load average while measuring: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
            print_phases(work, fmt)
        return 0 if ok else 1
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
