"""The CPU a run spends reading its tests, REF against the work tree, in turns.

The stage measured: the first reading of bench/suites.py's JSONL suites (`check_selected_suites`:
read, build, check and spool every test, and record the plan as a run does: `PlanRecorder`), then
the run's taking them back (the spool, `iter_jobs`) with each job's definition fingerprint, under
the run's GC thresholds. No target, grading or reports: what issue 31's "read the
tests" part costs, with less noise than a whole dry run. Each side runs in its own process (REF's
`src/` from `git archive`, as bench/compare.py does), after one unmeasured warm-up run each, the sides
taking turns; the CPU time is the stage's own (`time.process_time`, imports left out).

Usage: python bench/read_tests.py [REF] [--count 100000] [--runs 5] [--no-fingerprints]
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
import gc, sys, tempfile, time
from collections.abc import Callable
from pathlib import Path
from agentv_ci.running.estimate import CostEstimator
from agentv_ci.running.fingerprints import DefinitionFingerprints
from agentv_ci.running.gc_tuning import RUN_GC_THRESHOLD
from agentv_ci.running.needs import RunNeeds
from agentv_ci.running.plan import PlanOptions, iter_jobs
from agentv_ci.running.plan_record import PlanRecorder
from agentv_ci.running.selected_suites import check_selected_suites

gc.set_threshold(*RUN_GC_THRESHOLD)
with tempfile.TemporaryDirectory() as out:
    start = time.process_time()
    options = PlanOptions()
    recorder = PlanRecorder(
        Path(out), options, finished=set(), needs=RunNeeds(), dry_run=True, estimator=CostEstimator()
    )
    loaded = check_selected_suites([Path(sys.argv[1])], env={}, on_test=recorder)
    recorder.commit(resume=False)
    fingerprints, jobs = DefinitionFingerprints() if sys.argv[2] == "yes" else None, 0
    for one in loaded:
        for job in iter_jobs(one.suite, one.tests(), options):
            if fingerprints is not None:
                fingerprints.of_job(job, None)
            jobs += 1
    print(time.process_time() - start, jobs)
"""


def read_stage(suite: Path, count: int, fingerprints: bool) -> Callable[[Side], float]:
    def one(side: Side) -> float:
        cpu, jobs = stage_fields(side, STAGE, str(suite), "yes" if fingerprints else "no")
        if int(jobs) != count:
            raise SystemExit(f"{side.label}: {jobs} jobs, expected {count}")
        return float(cpu)

    return one


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ref", nargs="?", default=None)
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--no-fingerprints", action="store_true", help="the reading alone: no definition fingerprints"
    )
    args = parser.parse_args()
    ref = args.ref or default_ref()
    with tempfile.TemporaryDirectory(prefix="agentv-ci-read-") as temp:
        work = Path(temp)
        sides = [Side(ref, unpack_ref(ref, work)), Side("work tree", REPO / "src")]
        suite = work / f"evals-{args.count}"
        write_mock_suites(suite, args.count, "jsonl")
        subprocess.run([sys.executable, "-m", "compileall", "-q", *(str(s.src) for s in sides)], check=True)
        load = os.getloadavg()[0]
        times = in_turns(sides, args.runs, read_stage(suite, args.count, not args.no_fingerprints))
        medians = [statistics.median(times[side]) for side in sides]
        for side, median in zip(sides, medians, strict=True):
            runs = ", ".join(f"{t:.2f}" for t in times[side])
            print(f"{side.label}: {median:.3f} s [{runs}] CPU")
        print(f"ratio {medians[1] / medians[0]:.2f}x; load {load:.2f} -> {os.getloadavg()[0]:.2f} (1 min)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
