"""Benchmark: `agentv-ci discover` on a git repository of 5,000 eval files (target: under 2 s).

The repository has 50 areas; each holds shared case files (JSONL and YAML), a code-grader directory, a
judge prompt, and 100 evals: half as `evals/e-NNNN.eval.yaml`, half as `tasks/t-NNNN/EVAL.yaml` (each
in its own directory, some with a PROMPT.md); every other area has its own `.agentv/targets.yaml`.
`main` holds it; `feature` changes a shared JSONL, a grader helper, a PROMPT.md and an eval file, adds
one eval and deletes one. Prints the median wall time of `agentv-ci discover --base main` over 5
subprocess runs, the peak RSS, the ratio to the 2 s target, and where the time goes (one process).

Usage: python bench/discover_5k.py [--evals N] [--runs N] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

TARGET_S = 2.0
AREAS = 50
TARGETS = "targets:\n  - name: default\n    provider: mock\n    response: answer\n"
GRADED = "    assertions:\n      - type: contains\n        value: answer\n"


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.com",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.com",
    }
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _eval_text(area: int, i: int, kind: int, up: str) -> str:
    """kind 0: the area's shared JSONL; 1: inline + the shared YAML cases; 2: a code-grader; 3: a judge.
    `up` leads from the eval file's directory to the area (`../` or `../../`)."""
    head = f"name: e-{area:02d}-{i:04d}\ndescription: generated eval {i}\n"
    if kind == 0:
        return (
            head + f"tests: {up}cases/shared.jsonl\n" + "assertions:\n  - type: contains\n    value: answer\n"
        )
    body = f"tests:\n  - id: t{i}\n    input: question {i}?\n    expected_output: answer {i}\n" + GRADED
    if kind == 1:
        body += f"  - file://{up}cases/shared.cases.yaml\n"
    elif kind == 2:
        body += (
            "  - id: code\n    input: x\n    assertions:\n"
            f"      - type: code-grader\n        command: [python, {up}graders/check.py]\n"
        )
    else:
        body += (
            "  - id: judge\n    input: x\n    assertions:\n"
            f"      - type: llm-grader\n        prompt: file://{up}prompts/judge.md\n"
        )
    return head + body


def _eval_path(area_dir: Path, i: int) -> Path:
    return (
        area_dir / "evals" / f"e-{i:04d}.eval.yaml"
        if i % 2 == 0
        else area_dir / "tasks" / f"t-{i:04d}" / "EVAL.yaml"
    )


def generate(repo: Path, count: int) -> int:
    """Write the base commit on `main` and the change on `feature`; returns the evals expected selected."""
    per_area = count // AREAS
    (repo / ".agentv").mkdir(parents=True)
    (repo / ".agentv" / "targets.yaml").write_text(TARGETS)
    for area in range(AREAS):
        area_dir = repo / "areas" / f"area-{area:02d}"
        for sub in ("evals", "cases", "graders", "prompts", "tasks"):
            (area_dir / sub).mkdir(parents=True)
        (area_dir / "cases" / "shared.jsonl").write_text(
            '{"id": "j1", "input": "q1", "expected_output": "answer 1"}\n'
            '{"id": "j2", "input": "q2", "expected_output": "answer 2"}\n'
        )
        (area_dir / "cases" / "shared.cases.yaml").write_text(
            "- id: shared-1\n  input: hello\n  criteria: says hi\n" + GRADED.replace("    ", "  ", 1)
        )
        (area_dir / "graders" / "check.py").write_text("import json\nprint(json.dumps({'score': 1}))\n")
        (area_dir / "graders" / "helper.py").write_text("WEIGHT = 1\n")
        (area_dir / "prompts" / "judge.md").write_text("Grade {{output}} against {{expected_output}}\n")
        if area % 2:
            (area_dir / ".agentv").mkdir()
            (area_dir / ".agentv" / "targets.yaml").write_text(TARGETS)
        for i in range(per_area):
            path = _eval_path(area_dir, i)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(_eval_text(area, i, (i // 2) % 4, "../" if i % 2 == 0 else "../../"))
            if i % 10 == 1:
                (path.parent / "PROMPT.md").write_text(f"Task {i}: fix it.\n")
    _git(repo, "init", "--quiet", "--initial-branch=main")
    _git(repo, "add", "--all")
    _git(repo, "commit", "--quiet", "-m", "base")
    _git(repo, "checkout", "--quiet", "-b", "feature")

    area = lambda n: repo / "areas" / f"area-{n:02d}"  # noqa: E731
    expected: set[Path] = set()
    (area(3) / "cases" / "shared.jsonl").write_text('{"id": "j1", "input": "q1", "expected_output": "a"}\n')
    expected |= {_eval_path(area(3), i) for i in range(per_area) if (i // 2) % 4 == 0}
    (area(20) / "graders" / "helper.py").write_text("WEIGHT = 2\n")
    expected |= {_eval_path(area(20), i) for i in range(per_area) if (i // 2) % 4 == 2}
    prompt = _eval_path(area(30), 31).parent / "PROMPT.md"
    prompt.write_text("Task 31: fix it, carefully.\n")
    expected.add(prompt.parent / "EVAL.yaml")
    edited = _eval_path(area(10), 10)
    edited.write_text(edited.read_text() + "tags: [edited]\n")
    expected.add(edited)
    added = area(11) / "evals" / "e-9999.eval.yaml"
    added.write_text(_eval_text(11, 9999, 1, "../"))
    expected.add(added)
    _eval_path(area(12), 12).unlink()
    _git(repo, "add", "--all")
    _git(repo, "commit", "--quiet", "-m", "feature")
    return len(expected)


def run_once(repo: Path) -> tuple[float, float, dict[str, object]]:
    """One `agentv-ci discover --json` subprocess: (wall seconds, peak RSS MB, its JSON document)."""
    command = [sys.executable, "-m", "agentv_ci", "discover", "--base", "main", "--json"]
    # A fresh helper per run, so RUSAGE_CHILDREN's peak is this run's (the largest single process).
    helper = (
        "import resource, subprocess, sys, time, json\n"
        "t = time.perf_counter()\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "wall = time.perf_counter() - t\n"
        "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
        "print(json.dumps({'wall': wall, 'rss': rss, 'rc': p.returncode, 'out': p.stdout, "
        "'err': p.stderr[-2000:]}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", helper, *command], cwd=repo, capture_output=True, text=True, check=True
    )
    figures = json.loads(done.stdout)
    if figures["rc"] != 0:
        raise SystemExit(f"agentv-ci discover failed ({figures['rc']}):\n{figures['err']}")
    return figures["wall"], figures["rss"], json.loads(figures["out"])


PHASES = """
import os, sys, time
from pathlib import Path
clock = [time.perf_counter()]
def lap():
    now = time.perf_counter(); spent = now - clock[0]; clock[0] = now; return spent
from agentv_ci.selection import changed_files, select_changed_evals
from agentv_ci.selection.graph import eval_dependencies
from agentv_ci.loading.discovery import find_eval_files
imports = lap()
repo = Path.cwd()
changes = changed_files(repo, "main"); git = lap()
files = find_eval_files([repo]); find = lap()
graph = eval_dependencies(files, repo_root=repo); load = lap()
serial = eval_dependencies(files, repo_root=repo, workers=1); load_serial = lap()
selection = select_changed_evals([repo], changes, repo_root=repo); total = lap()
print(f"   phases in one process: imports {imports:.2f} s, git diff {git:.2f} s, "
      f"find eval files {find:.2f} s, "
      f"load + graph {load:.2f} s ({os.cpu_count()} CPUs; {load_serial:.2f} s in one process), "
      f"select_changed_evals end to end {total:.2f} s")
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evals", type=int, default=5_000)
    parser.add_argument("--runs", type=int, default=5, help="repeat and report the median")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="agentv-ci-bench-"))
    try:
        repo = work / "repo"
        expected = generate(repo, args.evals)
        runs = [run_once(repo) for _ in range(args.runs)]
        walls = sorted(r[0] for r in runs)
        wall = statistics.median(walls)
        rss = max(r[1] for r in runs)
        document = runs[-1][2]
        selected, total = len(document["selected"]), document["total"]  # type: ignore[arg-type]
        ok = selected == expected and document["removed"] == ["areas/area-12/evals/e-0012.eval.yaml"]
        print(
            f"== agentv-ci discover --base main: {total} eval files, "
            f"{document['changed_files']} changed files"
        )
        print(f"   selected {selected} (expected {expected}), removed {document['removed']}")
        each = ", ".join(f"{w:.2f}" for w in walls)
        print(f"   wall time (median of {args.runs}): {wall:.2f} s  [{each}]")
        print(f"   peak RSS (largest process): {rss:.0f} MB")
        verdict = "OK" if wall < TARGET_S else "OVER TARGET"
        print(f"   vs the {TARGET_S:.0f} s target: {wall / TARGET_S:.2f} of it -> {verdict}")
        print(f"   load average while measuring: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        done = subprocess.run([sys.executable, "-c", PHASES], cwd=repo, capture_output=True, text=True)
        print(done.stdout.rstrip() or f"   (phase breakdown failed: {done.stderr[-500:]})")
        return 0 if ok else 1
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
