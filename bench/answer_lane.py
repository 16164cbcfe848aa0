"""The CPU a dry run's answer lane spends per test, REF against the work tree, in turns.

The stage measured: `AnswerLanes.run`, `Runner._run_in_lane` on an older REF (the placeholder's
answer, its cap, the definition fingerprint, the three text graders and the row) for every test of
bench/suites.py's JSONL suites, the jobs planned beforehand and left out of the time. What issue
31's "answer lane" part costs, with less noise than a whole dry run. Each side runs in its own
process (REF's `src/` from `git archive`, as bench/compare.py does), the sides taking turns; the CPU
time is the stage's own (`time.process_time`).

Usage: python bench/answer_lane.py [REF] [--count 20000] [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from compare import REPO, Side, default_ref, in_turns, stage_fields, unpack_ref
from suites import write_mock_suites

STAGE = """
import sys, time
from pathlib import Path
from agentv_ci.running.plan import PlanOptions, iter_jobs
from agentv_ci.running.scheduler import Runner, RunnerOptions
from agentv_ci.running.selected_suites import check_selected_suites

loaded = check_selected_suites([Path(sys.argv[1])], env={})
jobs = [job for one in loaded for job in iter_jobs(one.suite, one.tests(), PlanOptions())]
runner = Runner(jobs, RunnerOptions(dry_run=True), lambda result: None)
runner.prepare()
passed = 0
start = time.process_time()
# The lane's own object since it left scheduler.py; the Runner's methods on an older REF.
lanes = getattr(runner, "_lanes", None)
lane_of, run = (lanes.lane, lanes.run) if hasattr(lanes, "run") else (runner._lane, runner._run_in_lane)
for job in jobs:
    lane = lane_of(job)
    row = run(job, lane)
    passed += row.verdict == "pass"
print(time.process_time() - start, len(jobs), passed)
"""


def lane_stage(suite: Path, count: int) -> Callable[[Side], float]:
    def one(side: Side) -> float:
        cpu, jobs, passed = stage_fields(side, STAGE, str(suite))
        if int(jobs) != count or int(passed) != count:
            raise SystemExit(f"{side.label}: {jobs} jobs, {passed} passed, expected {count}")
        return float(cpu)

    return one


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ref", nargs="?", default=None)
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    ref = args.ref or default_ref()
    with tempfile.TemporaryDirectory(prefix="agentv-ci-lane-") as temp:
        work = Path(temp)
        sides = [Side(ref, unpack_ref(ref, work)), Side("work tree", REPO / "src")]
        suite = work / f"evals-{args.count}"
        write_mock_suites(suite, args.count, "jsonl")
        subprocess.run([sys.executable, "-m", "compileall", "-q", *(str(s.src) for s in sides)], check=True)
        load = os.getloadavg()[0]
        times = in_turns(sides, args.runs, lane_stage(suite, args.count))
        medians = [statistics.median(times[side]) for side in sides]
        for side, median in zip(sides, medians, strict=True):
            runs = ", ".join(f"{t:.3f}" for t in times[side])
            per_test = median / args.count * 1e6
            print(f"{side.label}: {median:.3f} s [{runs}] CPU, {per_test:.1f} us a test")
        print(f"ratio {medians[1] / medians[0]:.2f}x; load {load:.2f} -> {os.getloadavg()[0]:.2f} (1 min)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
