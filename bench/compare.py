"""The per-test overhead guard: CPU seconds of the dry-run workloads, a git REF's source vs the work tree.

| name | workload |
|---|---|
| dry-2k | 2,000 tests (JSONL), mock target, 3 graders, all reports |
| dry-5k | 5,000 tests (JSONL), mock target, 3 graders, all reports |
| dry-100k | 100,000 tests (JSONL), mock target, 3 graders, all reports |

The suites are bench/suites.py's (`write_mock_suites`), the command bench/workloads.py's mock run
(`run --dry-run --workers 50` with JUnit, SARIF and Markdown). REF's `src/` is unpacked from
`git archive` into a temporary directory; both sides run with this interpreter and its installed
dependencies, through PYTHONPATH, byte code compiled first (as an install has it). The sides take
turns (A B, then B A, ...) after one unmeasured warm-up run each, so a change in the machine's load
(other jobs on the same cores) hits both alike; CPU time (user + system of the process), not wall
time, is compared, as it is what a test costs and moves least with the load.

Prints the median CPU seconds of each side and the ratio (work tree / REF) per workload, with the
load average. Exit 1 when a ratio is past `--max-ratio` (1.10: +10 %), 2 on a REF git cannot read.

REF defaults to the merge-base of HEAD with `main`, or HEAD~1 when HEAD is on main (`make bench-check`).

Usage: python bench/compare.py [REF] [--only dry-2k,dry-5k,dry-100k] [--runs 3] [--max-ratio 1.10]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from suites import write_mock_suites

REPO = Path(__file__).resolve().parent.parent
WORKLOADS = {"dry-2k": 2_000, "dry-5k": 5_000, "dry-100k": 100_000}


@dataclass(frozen=True)
class Side:
    """One source tree measured: a label and the `src` directory put on PYTHONPATH."""

    label: str
    src: Path


def _git(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True)


def default_ref() -> str:
    """The merge-base with main, or HEAD~1 when that is HEAD itself (working on main)."""
    head = _git("rev-parse", "HEAD").stdout.strip()
    base = _git("merge-base", "HEAD", "main")
    if base.returncode == 0 and base.stdout.strip() and base.stdout.strip() != head:
        return base.stdout.decode().strip()
    return "HEAD~1"


def unpack_ref(ref: str, into: Path) -> Path:
    """REF's `src/` unpacked under `into`; exits 2 when git cannot read it."""
    commit = _git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if commit.returncode != 0:
        print(f"bench/compare.py: {ref!r} is not a commit here")
        raise SystemExit(2)
    archive = into / "src.tar"
    done = _git("archive", "--format=tar", "-o", str(archive), commit.stdout.decode().strip(), "src")
    if done.returncode != 0:
        print(f"bench/compare.py: git archive {ref}: {done.stderr.decode(errors='replace').strip()}")
        raise SystemExit(2)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")  # our own repository's files; "data" refuses odd members
    archive.unlink()
    return into / "src"


def cpu_of(command: list[str], env: dict[str, str], cwd: Path) -> float:
    """User + system CPU seconds of one run of `command` (its whole process tree that it waited for)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        tail = (done.stdout + done.stderr).strip()[-2000:]
        raise SystemExit(f"{' '.join(command[:5])} ... exited {done.returncode}:\n{tail}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def stage_fields(side: Side, script: str, *args: str) -> list[str]:
    """The whitespace-separated fields a stage `script` (run as `python -c`, with `side`'s source on
    PYTHONPATH) prints; exits naming the side when it fails."""
    env = {**os.environ, "PYTHONPATH": str(side.src)}
    command = [sys.executable, "-c", script, *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{side.label}: exited {done.returncode}:\n{done.stderr[-2000:]}")
    return done.stdout.split()


def dry_run(work: Path, count: int) -> Callable[[Side], float]:
    """One measured dry run of `count` tests (the suites generated once), checked for its rows."""
    suite = work / f"evals-{count}"
    if not suite.exists():
        write_mock_suites(suite, count, "jsonl")

    def one(side: Side) -> float:
        out = work / f"out-{count}"
        shutil.rmtree(out, ignore_errors=True)
        command = [
            sys.executable, "-m", "agentv_ci", "run", str(suite), "--dry-run", "--workers", "50",
            "-o", str(out), "--quiet", "--no-fail", "--junit", str(out / "junit.xml"),
            "--sarif", str(out / "results.sarif"), "--markdown", str(out / "summary.md"),
        ]  # fmt: skip
        env = {**os.environ, "CI": "true", "PYTHONPATH": str(side.src)}
        env.pop("GITHUB_ACTIONS", None)  # the same console path on both sides
        cpu = cpu_of(command, env, work)
        with (out / "index.jsonl").open("rb") as handle:
            rows = sum(1 for line in handle if line.strip())
        if rows != count:
            raise SystemExit(f"{side.label}: {rows} result rows, expected {count}")
        return cpu

    return one


def in_turns(sides: list[Side], runs: int, one: Callable[[Side], float]) -> dict[Side, list[float]]:
    """One warm-up run per side, then `runs` rounds, each side once per round, the order alternating."""
    for side in sides:
        one(side)
    times: dict[Side, list[float]] = {side: [] for side in sides}
    for number in range(runs):
        for side in sides if number % 2 == 0 else reversed(sides):
            times[side].append(one(side))
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ref", nargs="?", default=None, help="the commit to compare with (see above)")
    parser.add_argument("--only", default=",".join(WORKLOADS), help="comma-separated workload names")
    parser.add_argument("--runs", type=int, default=3, help="measured runs per side (median)")
    parser.add_argument("--max-ratio", type=float, default=1.10, help="fail past this work tree / REF")
    args = parser.parse_args()
    chosen = [name for name in args.only.split(",") if name]
    unknown = [name for name in chosen if name not in WORKLOADS]
    if unknown or not chosen or args.runs < 1:
        print(f"bench/compare.py: --only takes {', '.join(WORKLOADS)}; --runs at least 1")
        return 2
    ref = args.ref or default_ref()
    work = Path(tempfile.mkdtemp(prefix="agentv-ci-compare-"))
    try:
        sides = [Side(ref, unpack_ref(ref, work)), Side("work tree", REPO / "src")]
        for side in sides:  # byte code, as an installed package has it (see the Makefile's bench)
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(side.src)], check=True)
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; {args.runs} runs per side, in turns")
        worst = 0.0
        for name in chosen:
            load_before = os.getloadavg()[0]
            times = in_turns(sides, args.runs, dry_run(work, WORKLOADS[name]))
            base, now = (statistics.median(times[side]) for side in sides)
            ratio = now / base
            worst = max(worst, ratio)
            each = {side.label: ", ".join(f"{t:.2f}" for t in times[side]) for side in sides}
            load = os.getloadavg()
            print(
                f"{name}: {ref} {base:.2f} s [{each[ref]}], work tree {now:.2f} s [{each['work tree']}] "
                f"CPU; ratio {ratio:.2f}x; load {load_before:.2f} -> {load[0]:.2f} (1 min)"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    verdict = f"past the {args.max_ratio:.2f}x limit" if worst > args.max_ratio else "within the limit"
    print(f"worst ratio {worst:.2f}x: {verdict}")
    return 1 if worst > args.max_ratio else 0


if __name__ == "__main__":
    raise SystemExit(main())
