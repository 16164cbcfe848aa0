"""Benchmark (a): 10,000 tests, mock target (`--dry-run`), three deterministic graders, all result
files written (index.jsonl, summary.json, JUnit, SARIF, Markdown). Prints wall time and peak RSS of
the `agentv-ci run` process and the ratios against AgentV 4.42.4 on the same work (~30 s, ~400 MB).

Usage: python bench/run_mock_10k.py [--tests N] [--format jsonl|yaml] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AGENTV_SECONDS = 30.0
AGENTV_MB = 400.0


def write_suite(directory: Path, count: int, fmt: str) -> Path:
    """Ten suites (files) of count/10 tests: each test has contains + regex + equals graders."""
    (directory / ".agentv").mkdir(parents=True)
    (directory / ".agentv" / "targets.yaml").write_text("targets:\n  - name: default\n    provider: mock\n")
    per_file = count // 10
    for file_index in range(10):
        name = f"bench-{file_index}"
        if fmt == "jsonl":
            lines = []
            for i in range(per_file):
                answer = f"answer number {i} for suite {file_index}"
                lines.append(
                    json.dumps({"id": f"t{i}", "input": f"question {i}?", "expected_output": answer})
                )
            (directory / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
            (directory / f"{name}.yaml").write_text(
                f"name: {name}\n"
                "assertions:\n"
                "  - type: contains\n    value: answer number\n"
                "  - type: regex\n    value: '^answer number \\d+'\n"
                "  - type: icontains\n    value: SUITE\n"
            )
        else:
            parts = [f"name: {name}\ntests:\n"]
            for i in range(per_file):
                answer = f"answer number {i} for suite {file_index}"
                parts.append(
                    f"  - id: t{i}\n    input: question {i}?\n    expected_output: {answer}\n"
                    "    assertions:\n"
                    "      - type: contains\n        value: answer number\n"
                    "      - type: regex\n        value: '^answer number \\d+'\n"
                    "      - type: icontains\n        value: SUITE\n"
                )
            (directory / f"{name}.eval.yaml").write_text("".join(parts))
    return directory


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=10_000)
    parser.add_argument("--format", choices=("jsonl", "yaml"), default="yaml")
    parser.add_argument("--workers", type=int, default=50)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="agentv-ci-bench-"))
    try:
        suite_dir = write_suite(work / "evals", args.tests, args.format)
        out = work / "out"
        command = [
            sys.executable, "-m", "agentv_ci", "run", str(suite_dir), "--dry-run",
            "--workers", str(args.workers), "-o", str(out), "--quiet", "--no-fail",
            "--junit", str(out / "junit.xml"), "--sarif", str(out / "results.sarif"),
            "--markdown", str(out / "summary.md"),
        ]  # fmt: skip
        env = {**os.environ, "CI": "true"}
        started = time.perf_counter()
        done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        if done.returncode != 0:
            print(done.stdout[-2000:], done.stderr[-2000:], sep="\n")
            return done.returncode
        rows = sum(1 for _ in (out / "index.jsonl").open("rb"))
        files = sorted(p.name for p in out.iterdir())
        shape = f"{args.format}, 10 files, 3 deterministic graders each"
        print(f"tests: {args.tests} ({shape}), workers {args.workers}")
        print(f"result rows: {rows}; files: {', '.join(files)}")
        print(f"wall time: {wall:.2f} s   peak RSS: {peak_mb:.0f} MB")
        print(f"speed-up vs AgentV (~{AGENTV_SECONDS:.0f} s): {AGENTV_SECONDS / wall:.1f}x (target >= 20x)")
        print(f"memory vs AgentV (~{AGENTV_MB:.0f} MB): {peak_mb / AGENTV_MB:.2f} of it (target < 0.33)")
        return 0 if rows == args.tests else 1
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
