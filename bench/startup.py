"""Start-up of `agentv-ci run` (issue 20): how long a whole process takes from its start to its first
model request, and its total wall time.

The rate-limited OpenAI-compatible server (tests/fakes/rate_limited_server.py) runs in this process
with no effective limit (rate and burst 1e6) and 50 ms per answer; it records when each admitted
request arrived (time.monotonic, which is system-wide). Each run starts
`python -m agentv_ci run bench.eval.yaml --workers 50 -o out --quiet --no-fail` on a project of N
tests (an `openai` target at the server, a `contains` assertion) and reports:
- first request: from just before the subprocess starts to the server's first admitted request;
- wall: the whole process.

Medians over `--runs` runs (after one unmeasured warm-up run per variant), with the CPU count and
load average. The package's byte code is compiled first (`compileall`), as an installed copy has it
(pip compiles at install): with PYTHONDONTWRITEBYTECODE set, as in this repository's environment,
every measured process would otherwise compile agentv_ci's sources again (~0.1 s here).
`--no-bytecode` measures exactly that case instead (as `bench/rate_limits.py` runs from a checkout
in this environment): the package's __pycache__ directories are removed and nothing is written.

`--baseline SRC` also runs another source tree (e.g. `git archive <commit> src | tar -x -C /tmp/base`)
through PYTHONPATH, interleaved run for run with this one.

Usage: python bench/startup.py [--tests 10,2500] [--runs 7] [--baseline DIR] [--no-bytecode]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import Variant, variants  # noqa: E402

from tests.fakes.rate_limited_server import RateLimitedServer  # noqa: E402


def _project(work: Path, count: int, base_url: str) -> Path:
    project = work / f"project-{count}"
    shutil.rmtree(project, ignore_errors=True)
    (project / ".agentv").mkdir(parents=True)
    (project / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: openai\n    model: gpt-4o-mini\n"
        f"    base_url: {base_url}\n    api_key: ${{{{ OPENAI_API_KEY }}}}\n"
    )
    lines = ["name: startup-bench", "assertions:", "  - type: contains", "    value: 'echo: question'"]
    lines.append("tests:")
    for i in range(count):
        lines += [f"  - id: t{i}", f"    criteria: echoes question {i}", f"    input: question {i}"]
    (project / "bench.eval.yaml").write_text("\n".join(lines) + "\n")
    return project


def _package(variant: Variant) -> Path:
    """The agentv_ci package directory the variant runs."""
    if variant.src is not None:
        return variant.src / "agentv_ci"
    spec = importlib.util.find_spec("agentv_ci")
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).parent


def _compile(variant: Variant, bytecode: bool) -> None:
    """Byte-compile the agentv_ci package the variant runs (its __pycache__ files, as pip writes),
    or remove its byte code (`--no-bytecode`)."""
    package = _package(variant)
    if not bytecode:
        for cache in package.rglob("__pycache__"):
            shutil.rmtree(cache)
        return
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], check=True)


def _one(server: RateLimitedServer, project: Path, count: int, env: dict[str, str]) -> tuple[float, float]:
    """One run: (seconds to the first admitted request, wall seconds)."""
    out = project / "out"
    shutil.rmtree(out, ignore_errors=True)
    server.admitted_at.clear()
    command = [sys.executable, "-m", "agentv_ci", "run", "bench.eval.yaml", "--workers", "50"]
    command += ["-o", str(out), "--quiet", "--no-fail"]
    started = time.monotonic()
    done = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=600)
    wall = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"agentv-ci exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    rows = [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines() if line.strip()]
    passed = sum(1 for row in rows if row.get("execution_status") == "ok")
    if passed != count:
        raise SystemExit(f"only {passed} of {count} tests passed")
    if not server.admitted_at:
        raise SystemExit("the server admitted no request")
    return server.admitted_at[0] - started, wall


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tests", default="10,2500", help="comma-separated test counts (default 10,2500)")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--baseline", type=Path, default=None, help="another source tree, interleaved")
    parser.add_argument("--no-bytecode", action="store_true", help="no byte code: sources compiled each run")
    args = parser.parse_args()
    measured = variants(args.baseline)
    for variant in measured:
        _compile(variant, not args.no_bytecode)
    counts = [int(x) for x in args.tests.split(",") if x.strip()]
    base_env = {**os.environ, "CI": "true", "OPENAI_API_KEY": "local-bench-key"}
    if args.no_bytecode:
        base_env["PYTHONDONTWRITEBYTECODE"] = "1"
    loads: list[float] = []
    print(f"{os.cpu_count()} CPUs; load average now {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with (
        tempfile.TemporaryDirectory(prefix="agentv-startup-") as tmp,
        RateLimitedServer(rate=1e6, burst=1e6, latency_s=0.05) as server,
    ):
        for count in counts:
            project = _project(Path(tmp), count, server.base_url)
            firsts: dict[Variant, list[float]] = {v: [] for v in measured}
            walls: dict[Variant, list[float]] = {v: [] for v in measured}
            for variant in measured:  # warm-up: page cache, .pyc files
                _one(server, project, count, variant.env(base_env))
            for number in range(args.runs):
                for variant in measured if number % 2 == 0 else list(reversed(measured)):
                    loads.append(os.getloadavg()[0])
                    first, wall = _one(server, project, count, variant.env(base_env))
                    firsts[variant].append(first)
                    walls[variant].append(wall)
            print(f"N={count}, --workers 50, {args.runs} runs:")
            for variant in measured:
                first, wall = statistics.median(firsts[variant]), statistics.median(walls[variant])
                each = ", ".join(f"{x:.3f}" for x in sorted(firsts[variant]))
                print(f"  {variant.label}: first request median {first:.3f} s [{each}]; wall {wall:.3f} s")
            if len(measured) == 2:
                a, b = (statistics.median(firsts[v]) for v in measured)
                print(f"  this tree - baseline: first request {1000 * (a - b):+.0f} ms")
    now = os.getloadavg()
    print(
        f"load average (1 min) before each run: min {min(loads):.2f}, median {statistics.median(loads):.2f}, "
        f"max {max(loads):.2f}; now {now[0]:.2f} {now[1]:.2f} {now[2]:.2f} on {os.cpu_count()} CPUs"
    )


if __name__ == "__main__":
    main()
