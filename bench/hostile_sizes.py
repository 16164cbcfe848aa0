"""Memory benchmark for hostile sizes (issue 19, item 9): peak RSS and output sizes of

1. `run --record` on two huge answers (default 200 MB each): from a cli target writing plain text,
   and from an OpenAI-compatible server on 127.0.0.1 (a 200 MB JSON body);
2. `report` (JUnit, SARIF, Markdown) on a run of 100k failing tests, each with a 2,000-character
   output excerpt and a failing grader whose evidence quotes 500 characters of it.

Each command runs in its own helper process (bench/measure.py), so the peak RSS is the command's own.
`--baseline SRC` measures another source tree too (e.g. the commit before a change:
`git archive <commit> src | tar -x -C /tmp/before`), interleaved with this one.

Usage: .venv/bin/python bench/hostile_sizes.py [--answer-mb 200] [--failing 100000] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import Variant, run_measured, variants

from agentv_ci.model.result import AssertionResult, GraderResult, TestResult
from agentv_ci.results.results_file import ResultsWriter


def _record_project(work: Path, answer_mb: int) -> Path:
    project = work / "record"
    (project / ".agentv").mkdir(parents=True)
    (project / ".git").mkdir()
    (project / "agent.py").write_text(
        "import sys\nwith open(sys.argv[1], 'w') as f:\n"
        f"    for _ in range({answer_mb}):\n        f.write('y' * 1_000_000)\n"
    )
    (project / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: agent\n    provider: cli\n"
        f"    command: {sys.executable} agent.py {{OUTPUT_FILE}}\n"
    )
    (project / "big.eval.yaml").write_text(
        "execution: {target: agent, workers: 2}\ntests:\n"
        + "".join(
            f"  - id: t{i}\n    input: say a lot\n    assertions: [{{type: contains, value: y}}]\n"
            for i in (1, 2)
        )
    )
    return project / "big.eval.yaml"


class _HugeAnswers(BaseHTTPRequestHandler):
    """An OpenAI chat-completions server whose answer is `size_mb` MB of 'y'."""

    size_mb = 200

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        head = (
            b'{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"finish_reason":"stop",'
            b'"message":{"role":"assistant","content":"'
        )
        tail = b'"}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}'
        chunk = b"y" * 1_000_000
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(head) + len(tail) + len(chunk) * self.size_mb))
        self.end_headers()
        try:
            self.wfile.write(head)
            for _ in range(self.size_mb):
                self.wfile.write(chunk)
            self.wfile.write(tail)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args: object) -> None:
        pass


def _http_project(work: Path, base_url: str) -> Path:
    project = work / "http"
    (project / ".agentv").mkdir(parents=True)
    (project / ".git").mkdir()
    (project / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - {name: model, provider: openai, model: m, api_key: sk-bench-0123456789, "
        f"base_url: '{base_url}', max_retries: 0}}\n"
    )
    (project / "big.eval.yaml").write_text(
        "execution: {target: model, workers: 2}\ntests:\n"
        + "".join(
            f"  - id: t{i}\n    input: say a lot\n    assertions: [{{type: contains, value: y}}]\n"
            for i in (1, 2)
        )
    )
    return project / "big.eval.yaml"


def _failing_run(work: Path, count: int) -> Path:
    out = work / "failing-run"
    out.mkdir()
    answer = ("The answer is not what was asked for. " * 60)[:2_000]
    with ResultsWriter(out / "index.jsonl") as writer:
        for i in range(count):
            grader = GraderResult(
                name="mentions-paris",
                type="contains",
                score=0.0,
                verdict="fail",
                assertions=[AssertionResult("contains 'Paris'", False, evidence=answer[:500])],
            )
            writer.append(
                TestResult(
                    test_id=f"case-{i:06d}",
                    suite=f"suite-{i % 10}",
                    target="default",
                    score=0.0,
                    execution_status="quality_failure",
                    verdict="fail",
                    scores=[grader],
                    eval_path=f"evals/suite-{i % 10}.eval.yaml",
                    line=3 + i,
                    input="What is the capital of France?",
                    output=answer,
                )
            )
    return out


def _show(label: str, variant: Variant, rss: float, files: dict[str, Path]) -> None:
    sizes = ", ".join(
        f"{name} {path.stat().st_size / 1e6:.1f} MB" for name, path in files.items() if path.exists()
    )
    print(f"{label} [{variant.label}]: peak RSS {rss:.0f} MiB; {sizes}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answer-mb", type=int, default=200, help="size of each of the two answers")
    parser.add_argument("--failing", type=int, default=100_000, help="failing rows for `report`")
    parser.add_argument("--baseline", type=Path, default=None, help="another source tree to measure")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="agentv-ci-hostile-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTV_CI_"))}
    env.update(CI="true", XDG_CACHE_HOME=str(work / "cache"))
    try:
        _HugeAnswers.size_mb = args.answer_mb
        server = ThreadingHTTPServer(("127.0.0.1", 0), _HugeAnswers)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        projects = {
            "cli target": _record_project(work, args.answer_mb),
            "openai target": _http_project(work, f"http://127.0.0.1:{server.server_address[1]}/v1"),
        }
        run_dir = _failing_run(work, args.failing)
        for variant in variants(args.baseline):
            for kind, eval_file in projects.items():
                out, record = work / "record-out", work / "answers.jsonl"
                command = [sys.executable, "-m", "agentv_ci", "run", str(eval_file), "-o", str(out),
                           "--record", str(record), "--no-cache", "--quiet"]  # fmt: skip
                _, rss, rc, _, _ = run_measured(
                    command, cwd=eval_file.parent, env=variant.env(env), check=False
                )
                label = f"run --record, {kind}, 2 x {args.answer_mb} MB answers (exit {rc})"
                _show(label, variant, rss, {"--record": record})
                errors = [
                    line for line in (out / "index.jsonl").read_text().splitlines() if '"error"' in line
                ][:1]
                for line in errors:
                    print("    first error:", json.loads(line).get("error", "")[:200])
                shutil.rmtree(out, ignore_errors=True)
                record.unlink(missing_ok=True)
            reports = {name: work / name for name in ("junit.xml", "results.sarif", "summary.md")}
            command = [sys.executable, "-m", "agentv_ci", "report", str(run_dir),
                       "--junit", str(reports["junit.xml"]), "--sarif", str(reports["results.sarif"]),
                       "--markdown", str(reports["summary.md"])]  # fmt: skip
            _, rss, rc, _, _ = run_measured(command, cwd=work, env=variant.env(env), check=False)
            _show(f"report, {args.failing} failing tests (exit {rc})", variant, rss, reports)
            for path in reports.values():
                path.unlink(missing_ok=True)
        server.shutdown()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
