"""The performance workloads of issue 12, each measured as whole `agentv-ci` processes: the median wall
time of 5 runs, the peak RSS of the process, and the ratio to the target.

| name | workload | target |
|---|---|---|
| run-2k | 2,000 tests (JSONL), mock target, 3 graders, all reports | <= 0.28 s |
| run-10k-jsonl | 10,000 tests, JSONL datasets, all reports | <= 0.6 s |
| run-10k-yaml | 10,000 tests, 10 YAML files of 1,000 inline tests, all reports | <= 1.0 s |
| run-100k-jsonl | 100,000 tests, JSONL datasets, all reports | <= 4 s, peak RSS <= 120 MiB |
| validate-100k | `validate` on a 100k-case JSONL, every line checked | <= 0.8 s, <= 100 MiB |
| openai-1k | 1,000 tests vs a 50 ms OpenAI-compatible server, 50 workers | <= 1.2 s, whole process |
| help | `agentv-ci --help` | <= 0.08 s |

"All reports": index.jsonl, summary.json, JUnit, SARIF and Markdown. The mock target runs through
`--dry-run` (its placeholder answers are graded by all three graders: the grading work is real).

`--baseline SRC` measures another source tree (e.g. `git archive <commit> src | tar -x -C /tmp/base`)
interleaved with this one, run for run, and prints both and their ratio.

Usage: python bench/workloads.py [--only NAME,...] [--runs 5] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import Figures, Variant, describe_load, measure_interleaved, run_measured, variants
from suites import write_mock_suites, write_validate_dataset

REPO = Path(__file__).resolve().parent.parent
AGENTV_CI = [sys.executable, "-m", "agentv_ci"]


@dataclass(frozen=True)
class Workload:
    name: str
    title: str
    target_s: float
    target_rss: float | None = None


WORKLOADS = [
    Workload("run-2k", "2,000 tests, mock target, 3 graders, all reports", 0.28),
    Workload("run-10k-jsonl", "10,000 tests, JSONL dataset, all reports", 0.6),
    Workload("run-10k-yaml", "10,000 tests, 10 YAML files of 1,000 inline tests, all reports", 1.0),
    Workload("run-100k-jsonl", "100,000 tests, JSONL, all reports", 4.0, 120.0),
    Workload("validate-100k", "`validate` on a 100k-case JSONL, every line checked", 0.8, 100.0),
    Workload("openai-1k", "1,000 tests vs a 50 ms OpenAI-compatible server, 50 workers", 1.2),
    Workload("help", "`agentv-ci --help`", 0.08),
]

SERVER = """
import sys
sys.path.insert(0, {repo!r})
from tests.fakes.llm_server import FakeLlmServer
server = FakeLlmServer(latency_s={latency})
server._httpd.socket.listen(1024)  # the default backlog (5) drops bursts of 50 new connections
# http.server writes headers and body separately: without TCP_NODELAY every reply waits ~40 ms for a
# delayed ACK, which would measure the kernel, not agentv-ci.
server._httpd.RequestHandlerClass.disable_nagle_algorithm = True
with server:
    print(server.base_url, flush=True)
    sys.stdin.read()
"""


def _count_rows(index: Path) -> int:
    with index.open("rb") as handle:
        return sum(1 for line in handle if line.strip())


class Bench:
    """Generated inputs (in `work`) and one measured run per (workload, variant, run number)."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.env = {**os.environ, "CI": "true"}
        self.server: subprocess.Popen[str] | None = None
        self.base_url = ""
        self.in_flight: dict[Variant, list[float]] = {}

    def suite(self, count: int, fmt: str) -> Path:
        directory = self.work / f"evals-{fmt}-{count}"
        if not directory.exists():
            write_mock_suites(directory, count, fmt)
        return directory

    def mock_run(self, count: int, fmt: str) -> Callable[[Variant, int], tuple[float, float]]:
        suite = self.suite(count, fmt)

        def one(variant: Variant, number: int) -> tuple[float, float]:
            out = self.work / f"out-{fmt}-{count}"
            shutil.rmtree(out, ignore_errors=True)
            command = [
                *AGENTV_CI, "run", str(suite), "--dry-run", "--workers", "50", "-o", str(out), "--quiet",
                "--no-fail", "--junit", str(out / "junit.xml"), "--sarif", str(out / "results.sarif"),
                "--markdown", str(out / "summary.md"),
            ]  # fmt: skip
            wall, rss, _, _, _ = run_measured(command, cwd=self.work, env=variant.env(self.env))
            rows = _count_rows(out / "index.jsonl")
            if rows != count:
                raise SystemExit(f"{variant.label}: {rows} result rows, expected {count}")
            return wall, rss

        return one

    def validate(self, count: int) -> Callable[[Variant, int], tuple[float, float]]:
        directory = self.work / f"validate-{count}"
        dataset = directory / "dataset.jsonl"
        if not dataset.exists():
            write_validate_dataset(directory, count)

        def one(variant: Variant, number: int) -> tuple[float, float]:
            command = [*AGENTV_CI, "validate", str(dataset)]
            wall, rss, rc, out, err = run_measured(command, cwd=self.work, env=variant.env(self.env))
            if rc != 0 or f"{count} test(s)" not in out + err:
                raise SystemExit(f"{variant.label}: validate said ({rc}):\n{out}\n{err}")
            return wall, rss

        return one

    def help(self) -> Callable[[Variant, int], tuple[float, float]]:
        def one(variant: Variant, number: int) -> tuple[float, float]:
            command = [*AGENTV_CI, "--help"]
            wall, rss, rc, out, _ = run_measured(command, cwd=self.work, env=variant.env(self.env))
            if rc != 0 or "run" not in out:
                raise SystemExit(f"{variant.label}: --help failed")
            return wall, rss

        return one

    def openai(self, count: int, latency: float) -> Callable[[Variant, int], tuple[float, float]]:
        if self.server is None:
            self.server = subprocess.Popen(
                [sys.executable, "-c", SERVER.format(repo=str(REPO), latency=latency)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            assert self.server.stdout is not None
            self.base_url = self.server.stdout.readline().strip()
        suite = self.work / "evals-openai"
        if not suite.exists():
            (suite / ".agentv").mkdir(parents=True)
            (suite / ".agentv" / "targets.yaml").write_text(
                "targets:\n  - name: default\n    provider: openai\n    model: gpt-4o-mini\n"
                f"    base_url: {self.base_url}\n    api_key: local-test-key\n    max_retries: 0\n"
            )
            lines = [json.dumps({"id": f"t{i}", "input": f"question {i}"}) for i in range(count)]
            (suite / "bench.jsonl").write_text("\n".join(lines) + "\n")
            (suite / "bench.yaml").write_text(
                "name: openai-bench\nassertions:\n  - type: contains\n    value: 'echo: question'\n"
            )

        def one(variant: Variant, number: int) -> tuple[float, float]:
            out = self.work / "out-openai"
            shutil.rmtree(out, ignore_errors=True)
            command = [*AGENTV_CI, "run", str(suite), "--workers", "50", "-o", str(out), "--quiet"]
            command.append("--no-fail")
            wall, rss, _, _, _ = run_measured(command, cwd=self.work, env=variant.env(self.env))
            rows = [json.loads(line) for line in (out / "index.jsonl").open()]
            passed = sum(1 for r in rows if r["execution_status"] == "ok")
            if passed != count:
                raise SystemExit(f"{variant.label}: only {passed} of {count} tests passed")
            starts = [datetime.fromisoformat(r["start_time"].replace("Z", "+00:00")) for r in rows]
            ends = [datetime.fromisoformat(r["end_time"].replace("Z", "+00:00")) for r in rows]
            if number >= 0:
                self.in_flight.setdefault(variant, []).append((max(ends) - min(starts)).total_seconds())
            return wall, rss

        return one

    def close(self) -> None:
        if self.server is not None:
            assert self.server.stdin is not None
            self.server.stdin.close()
            self.server.wait(timeout=10)


def measure(bench: Bench, workload: Workload) -> Callable[[Variant, int], tuple[float, float]]:
    name = workload.name
    if name == "run-2k":
        return bench.mock_run(2_000, "jsonl")
    if name == "run-10k-jsonl":
        return bench.mock_run(10_000, "jsonl")
    if name == "run-10k-yaml":
        return bench.mock_run(10_000, "yaml")
    if name == "run-100k-jsonl":
        return bench.mock_run(100_000, "jsonl")
    if name == "validate-100k":
        return bench.validate(100_000)
    if name == "openai-1k":
        return bench.openai(1_000, 0.05)
    if name == "help":
        return bench.help()
    raise SystemExit(f"unknown workload {name!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated workload names (default: all)")
    parser.add_argument("--runs", type=int, default=5, help="measured runs per variant (median)")
    parser.add_argument("--baseline", type=Path, default=None, help="another source tree, interleaved")
    parser.add_argument("--keep", action="store_true", help="keep the generated inputs")
    args = parser.parse_args()
    chosen = [w for w in WORKLOADS if not args.only or w.name in args.only.split(",")]
    if args.only and len(chosen) != len(set(args.only.split(","))):
        known = ", ".join(w.name for w in WORKLOADS)
        raise SystemExit(f"--only: unknown workload (known: {known})")
    measured = variants(args.baseline)
    work = Path(tempfile.mkdtemp(prefix="agentv-ci-bench-"))
    table: list[tuple[Workload, dict[Variant, Figures], str]] = []
    bench = Bench(work)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {os.uname().machine}; runs: {args.runs}")
    try:
        for workload in chosen:
            one = measure(bench, workload)
            results = measure_interleaved(measured, args.runs, one)
            load = describe_load(results)
            print(f"== {workload.name}: {workload.title}")
            for variant, figures in results.items():
                print(f"   {variant.label}: {figures.line(workload.target_s, workload.target_rss)}")
                if workload.name == "openai-1k":
                    spans = sorted(bench.in_flight.get(variant, []))
                    if spans:
                        middle = spans[len(spans) // 2]
                        each = ", ".join(f"{s:.2f}" for s in spans)
                        print(f"      first request -> last response: median {middle:.3f} s [{each}]")
            if len(measured) == 2:
                now, base = results[measured[0]], results[measured[1]]
                time_ratio, rss_ratio = now.wall / base.wall, now.peak_rss / base.peak_rss
                print(f"   this tree / baseline: time {time_ratio:.2f}x, RSS {rss_ratio:.2f}x")
            print(f"   {load}")
            table.append((workload, results, load))
    finally:
        bench.close()
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print()
    header = "| workload | " + " | ".join(v.label for v in measured) + " | target |"
    print(header)
    print("|---" * (len(measured) + 2) + "|")
    for workload, results, _ in table:
        cells = [f"{results[v].wall:.3f} s, {results[v].peak_rss:.0f} MiB" for v in measured]
        target = f"<= {workload.target_s:g} s"
        if workload.target_rss:
            target += f", <= {workload.target_rss:g} MiB"
        print(f"| {workload.name} | " + " | ".join(cells) + f" | {target} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
