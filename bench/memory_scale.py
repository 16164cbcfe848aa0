"""Memory benchmark: peak RSS of `agentv-ci run` over JSONL datasets of 10k, 100k and (opt-in) 1M tests.

Each size is ten JSONL datasets (a YAML sidecar with three deterministic graders each), run against
the mock target (`--dry-run`, 50 workers) with every report written (index.jsonl, summary.json, JUnit,
SARIF, Markdown). The target of issue 12: the peak RSS stays flat, within 1.5x of the 10k figure.

The 1M run is opt-in (`--with-1m`): it writes ~110 MB of datasets and ~1 GB of results and reports
and takes a few minutes. Reproduce with `.venv/bin/python bench/memory_scale.py --with-1m` (`--runs`
repeats each size; the peak of the runs is reported). `--baseline SRC` measures another source tree
interleaved with this one (see bench/measure.py).

Usage: python bench/memory_scale.py [--with-1m] [--sizes 10000,100000] [--runs 1] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import Variant, describe_load, measure_interleaved, run_measured, variants
from suites import write_mock_suites

FLATNESS = 1.5  # the largest size's peak RSS may be at most this multiple of the smallest's


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated test counts")
    parser.add_argument("--with-1m", action="store_true", help="also run 1,000,000 tests (minutes)")
    parser.add_argument("--runs", type=int, default=1, help="runs per size and variant")
    parser.add_argument("--baseline", type=Path, default=None, help="another source tree, interleaved")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.with_1m and 1_000_000 not in sizes:
        sizes.append(1_000_000)
    measured = variants(args.baseline)
    work = Path(tempfile.mkdtemp(prefix="agentv-ci-memory-"))
    env = {**os.environ, "CI": "true"}
    peaks: dict[tuple[int, Variant], tuple[float, float]] = {}
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; runs per size: {args.runs}")
    try:
        for size in sizes:
            suite = write_mock_suites(work / f"evals-{size}", size, "jsonl")

            def one(
                variant: Variant, number: int, size: int = size, suite: Path = suite
            ) -> tuple[float, float]:
                out = work / f"out-{size}"
                shutil.rmtree(out, ignore_errors=True)
                command = [
                    sys.executable, "-m", "agentv_ci", "run", str(suite), "--dry-run", "--workers", "50",
                    "-o", str(out), "--quiet", "--no-fail", "--junit", str(out / "junit.xml"),
                    "--sarif", str(out / "results.sarif"), "--markdown", str(out / "summary.md"),
                ]  # fmt: skip
                wall, rss, _, _, _ = run_measured(command, cwd=work, env=variant.env(env))
                with (out / "index.jsonl").open("rb") as handle:
                    rows = sum(1 for _ in handle)
                if rows != size:
                    raise SystemExit(f"{variant.label}: {rows} rows, expected {size}")
                return wall, rss

            results = measure_interleaved(measured, args.runs, one, warmup=False)
            print(f"== {size:,} tests (10 JSONL datasets, all reports)")
            for variant, figures in results.items():
                peaks[(size, variant)] = (figures.peak_rss, figures.wall)
                print(
                    f"   {variant.label}: peak RSS {figures.peak_rss:.0f} MiB, "
                    f"wall median {figures.wall:.2f} s"
                )
            print(f"   {describe_load(results)}")
            shutil.rmtree(work / f"evals-{size}", ignore_errors=True)
            shutil.rmtree(work / f"out-{size}", ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    smallest, largest = min(sizes), max(sizes)
    print()
    for variant in measured:
        base = peaks[(smallest, variant)][0]
        cells = ", ".join(f"{size:,}: {peaks[(size, variant)][0]:.0f} MiB" for size in sizes)
        ratio = peaks[(largest, variant)][0] / base
        verdict = "flat" if ratio <= FLATNESS else "NOT flat"
        print(
            f"{variant.label}: {cells}; {largest:,} / {smallest:,} = {ratio:.2f}x "
            f"(target <= {FLATNESS}x: {verdict})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
