"""Measuring `agentv-ci` processes for the benchmarks: wall time and peak RSS of one subprocess, runs
repeated and interleaved between variants (this tree, and optionally another source tree run with the
same interpreter), medians, ratios to a target and the load average while measuring.

Each run happens in a fresh helper process that starts the command and reads RUSAGE_CHILDREN, so the
peak RSS reported is the measured process's own (not the benchmark's, not an earlier run's).

A variant is a label plus a PYTHONPATH: `--baseline SRC` adds a variant that runs the source tree SRC
(e.g. a `git archive` of the commit before a change, unpacked into /tmp) with this interpreter and its
installed dependencies, interleaved with this tree run for run, so both see the same machine load.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Figures", "Variant", "describe_load", "measure_interleaved", "run_measured", "variants"]

_HELPER = (
    "import json, resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "p = subprocess.run(sys.argv[1:], capture_output=True)\n"
    "wall = time.perf_counter() - t\n"
    "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
    "sys.stdout.write(json.dumps({'wall': wall, 'rss': rss, 'rc': p.returncode,\n"
    "    'out': p.stdout[-4000:].decode('utf-8', 'replace'),\n"
    "    'err': p.stderr[-4000:].decode('utf-8', 'replace')}))\n"
)


@dataclass(frozen=True)
class Variant:
    """What is measured: `label`, and the source tree put first on PYTHONPATH (None: this install)."""

    label: str
    src: Path | None = None

    def env(self, base: dict[str, str]) -> dict[str, str]:
        env = dict(base)
        if self.src is not None:
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(self.src), base.get("PYTHONPATH")]))
        return env


@dataclass
class Figures:
    """Every run of one variant: wall seconds and peak RSS (MiB), in the order they ran."""

    walls: list[float] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)
    loads: list[float] = field(default_factory=list)  # 1-minute load average just before each run

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    @property
    def peak_rss(self) -> float:
        return max(self.rss)

    def line(self, target_s: float | None = None, target_rss: float | None = None) -> str:
        each = ", ".join(f"{w:.2f}" for w in sorted(self.walls))
        text = f"median {self.wall:.3f} s [{each}]; peak RSS {self.peak_rss:.0f} MiB"
        if target_s is not None:
            text += f"; {self.wall / target_s:.2f}x of the {target_s:g} s target"
        if target_rss is not None:
            text += f"; RSS {self.peak_rss / target_rss:.2f}x of {target_rss:g} MiB"
        return text


def variants(baseline: Path | None) -> list[Variant]:
    """This tree, and the `--baseline` source tree when given (its `src/` if it has one)."""
    found = [Variant("this tree")]
    if baseline is not None:
        src = baseline / "src" if (baseline / "src" / "agentv_ci").is_dir() else baseline
        if not (src / "agentv_ci").is_dir():
            raise SystemExit(f"--baseline {baseline}: no agentv_ci package there (or in its src/)")
        found.append(Variant(f"baseline {baseline}", src.resolve()))
    return found


def run_measured(
    command: Sequence[str], *, cwd: Path, env: dict[str, str], check: bool = True
) -> tuple[float, float, int, str, str]:
    """One run of `command`: (wall seconds, peak RSS MiB, exit code, stdout tail, stderr tail)."""
    done = subprocess.run(
        [sys.executable, "-c", _HELPER, *command], cwd=cwd, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"benchmark helper failed: {done.stderr[-2000:]}")
    figures = json.loads(done.stdout)
    if check and figures["rc"] not in (0, 1):
        raise SystemExit(
            f"{' '.join(command[:4])} ... exited {figures['rc']}:\n{figures['out']}\n{figures['err']}"
        )
    return figures["wall"], figures["rss"], figures["rc"], figures["out"], figures["err"]


def measure_interleaved(
    measured: Sequence[Variant],
    runs: int,
    one_run: Callable[[Variant, int], tuple[float, float]],
    *,
    warmup: bool = True,
) -> dict[Variant, Figures]:
    """`runs` rounds; each round runs every variant once, in turn (ABAB...), so a change in the
    machine's load hits all of them alike. One unmeasured warm-up run per variant first (page cache,
    .pyc files) unless `warmup` is False."""
    results = {variant: Figures() for variant in measured}
    if warmup:
        for variant in measured:
            one_run(variant, -1)
    for number in range(runs):
        order = measured if number % 2 == 0 else list(reversed(measured))
        for variant in order:
            load = os.getloadavg()[0]
            wall, rss = one_run(variant, number)
            results[variant].walls.append(wall)
            results[variant].rss.append(rss)
            results[variant].loads.append(load)
    return results


def describe_load(results: dict[Variant, Figures]) -> str:
    loads = [x for figures in results.values() for x in figures.loads]
    now = os.getloadavg()
    return (
        f"load average (1 min) before each run: min {min(loads):.2f}, median "
        f"{statistics.median(loads):.2f}, max {max(loads):.2f}; now {now[0]:.2f} {now[1]:.2f} {now[2]:.2f} "
        f"on {os.cpu_count()} CPUs"
    )
