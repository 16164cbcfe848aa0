"""Benchmark: generate a 100k-case JSONL suite with a YAML sidecar, then validate it.

Prints wall time and peak RSS for each phase. Targets here: validate < 3 s, peak RSS < 400 MB.
Run: `make bench` (or `.venv/bin/python bench/validate_100k.py [--cases N] [--keep DIR]`).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

SIDECAR = """\
name: bench-100k
description: Generated benchmark dataset
execution:
  target: default
  threshold: 0.8
assertions:
  - type: contains
    value: answer
  - Answers the question correctly
"""


def peak_rss_mb() -> float:
    # ru_maxrss is KiB on Linux, bytes on macOS.
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def generate(directory: Path, cases: int) -> Path:
    dataset = directory / "dataset.jsonl"
    (directory / "dataset.yaml").write_text(SIDECAR)
    with dataset.open("w", encoding="utf-8") as handle:
        for i in range(cases):
            row = {
                "id": f"case-{i:06d}",
                "criteria": f"Explains item {i} correctly",
                "input": f"What is item {i}?",
                "expected_output": f"Item {i} is an answer.",
                "metadata": {"bucket": i % 17},
            }
            handle.write(json.dumps(row) + "\n")
    return dataset


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--keep", type=Path, default=None, help="write the dataset here and keep it")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="agentv-ci-bench-") as tmp:
        directory = args.keep or Path(tmp)
        directory.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        dataset = generate(directory, args.cases)
        generated = time.perf_counter() - start
        size_mb = dataset.stat().st_size / 1e6
        print(
            f"generate: {args.cases} cases, {size_mb:.1f} MB in {generated:.2f} s "
            f"(peak RSS {peak_rss_mb():.0f} MB)"
        )

        start = time.perf_counter()
        from agentv_ci.validation.validator import validate_paths

        report = validate_paths([dataset], env={})
        elapsed = time.perf_counter() - start
        rss = peak_rss_mb()
        print(
            f"validate: {report.tests} tests, {report.errors} errors, {report.warnings} warnings "
            f"in {elapsed:.2f} s (peak RSS {rss:.0f} MB)"
        )
        ok = report.tests == args.cases and report.errors == 0
        verdict = "OK" if ok and elapsed < 3.0 and rss < 400 else "OVER TARGET"
        print(f"target: < 3 s and < 400 MB -> {verdict}")
        return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
