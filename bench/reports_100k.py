"""Benchmark: results file and reports on 100k results.

Generates two runs (base and head) of N results each with realistic rows (a failing grader with
evidence, input/output excerpts, tokens, cost), then times every stage a CI job runs after the
tests: writing index.jsonl, reading it back (`load_run`), the gates, JUnit, SARIF, Markdown,
console, and the baseline comparison (`compare_runs` and its three renderings). Prints one line per
stage (median of `--repeat` runs) and the output sizes. No thresholds are asserted here.

Run: `.venv/bin/python bench/reports_100k.py [--results N] [--repeat 3]`.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentv_ci.compare import compare_runs, render_comparison
from agentv_ci.gating import GateOptions, decide
from agentv_ci.model.result import AssertionResult, GraderResult, TestResult, TokenUsage
from agentv_ci.plugins import ReportOptions
from agentv_ci.reporting.console import render_console
from agentv_ci.reporting.junit import render_junit
from agentv_ci.reporting.markdown import render_markdown
from agentv_ci.reporting.sarif import SarifReporter
from agentv_ci.results.results_file import ResultsWriter, load_run

REPO = Path("/repo")


def make_results(count: int, *, shift: float) -> list[TestResult]:
    results = []
    for i in range(count):
        score = min(1.0, max(0.0, ((i * 7919) % 100) / 100 + shift))
        passed = score >= 0.8
        grader = GraderResult(
            "judge",
            "llm-grader",
            score,
            "pass" if passed else "fail",
            assertions=[AssertionResult(f"answers item {i}", passed, None if passed else f"missed {i}")],
        )
        results.append(
            TestResult(
                f"case-{i:06d}",
                f"suite-{i % 25}",
                "mock",
                score,
                "ok" if passed else "quality_failure",
                verdict="pass" if passed else "fail",
                scores=[grader],
                token_usage=TokenUsage(120, 40),
                cost_usd=0.0002,
                duration_ms=850.0,
                eval_path=f"evals/suite-{i % 25}.eval.yaml",
                line=i % 5000 + 1,
                input=f"What is item {i}?",
                output=f"Item {i} is an answer. " * 8,
            )
        )
    return results


def timed(repeat: int, fn: Callable[[], Any]) -> tuple[float, Any]:
    times, value = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--results", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    n, repeat = args.results, args.repeat
    head_rows, base_rows = make_results(n, shift=0.0), make_results(n, shift=0.05)
    print(f"reports bench: {n:,} results per run, median of {repeat}")

    with tempfile.TemporaryDirectory(prefix="agentv-ci-reports-") as tmp:
        head_dir, base_dir = Path(tmp) / "head", Path(tmp) / "base"

        def write(rows: list[TestResult], directory: Path) -> int:
            index = directory / "index.jsonl"
            index.unlink(missing_ok=True)
            with ResultsWriter(index) as writer:
                for row in rows:
                    writer.append(row)
            return index.stat().st_size

        seconds, size = timed(repeat, lambda: write(head_rows, head_dir))
        write(base_rows, base_dir)
        print(f"  write index.jsonl   {seconds:7.2f} s   {size / 1e6:.1f} MB")
        seconds, head = timed(repeat, lambda: load_run(head_dir))
        base = load_run(base_dir)
        print(f"  read (load_run)     {seconds:7.2f} s   {len(head.results):,} results")

        seconds, decision = timed(repeat, lambda: decide(head, GateOptions(), base))
        print(f"  gates + baseline    {seconds:7.2f} s   exit {int(decision.exit_code)}")
        seconds, xml = timed(repeat, lambda: render_junit(head, REPO))
        print(f"  JUnit               {seconds:7.2f} s   {len(xml.encode()) / 1e6:.1f} MB")
        sarif_path = Path(tmp) / "report.sarif"
        options = ReportOptions(path=sarif_path, repo_root=REPO)
        seconds, _ = timed(repeat, lambda: SarifReporter().write(head, options))
        sarif = sarif_path.read_bytes()
        gz = len(gzip.compress(sarif))
        print(f"  SARIF (file)        {seconds:7.2f} s   {len(sarif) / 1e6:.1f} MB ({gz / 1e6:.1f} MB gzip)")
        comparison = decision.comparison
        seconds, md = timed(repeat, lambda: render_markdown(head, decision, comparison=comparison))
        print(f"  Markdown            {seconds:7.2f} s   {len(md):,} chars")
        seconds, text = timed(repeat, lambda: render_console(head, decision))
        print(f"  console             {seconds:7.2f} s   {len(text.splitlines())} lines")

        seconds, comparison = timed(repeat, lambda: compare_runs(base.results, head.results))
        regressed = sum(1 for t in comparison.tests if t.status in ("broken", "regressed"))
        print(f"  compare_runs        {seconds:7.2f} s   {regressed:,} broken/regressed")
        for fmt in ("table", "json", "markdown"):
            seconds, out = timed(repeat, lambda fmt=fmt: render_comparison(comparison, fmt))  # type: ignore[misc]
            print(f"  compare --format {fmt:<8} {seconds:5.2f} s   {len(out):,} chars")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
