"""End to end: two eval files never share a suite name, so every test key (suite, test id, target) is
one test's.

AgentV's layout has one `EVAL.yaml` per directory, and AgentV names a suite from `name:`, else from
the file name: `evals/a/EVAL.yaml` and `evals/b/EVAL.yaml` are both suite `EVAL`. Their tests with
the same id would share one key in the plan, index.jsonl, --resume, merge, the reports and the
sidecar baseline. `validate` reports it (E116 at the second file, naming the first) with every other
problem, and `run` refuses it (exit 2) before anything runs or is written; with a `name:` each, the
kill/resume and sidecar regression scenarios behave.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.cli_helpers import run_cli

# A real cli agent: answers from answer-<suite>.txt, sleeps on "slow", leaves a mark that it ran.
AGENT = """\
import pathlib, sys, time
here = pathlib.Path(__file__).parent
prompt = pathlib.Path(sys.argv[1]).read_text()
(here / "ran").mkdir(exist_ok=True)
(here / "ran" / str(len(list((here / "ran").iterdir())))).write_text(prompt)
if "slow" in prompt:
    time.sleep(60)
suite = "b" if "from b" in prompt else "a"
pathlib.Path(sys.argv[2]).write_text((here / f"answer-{suite}.txt").read_text())
"""


def eval_yaml(origin: str, *, name: str | None = None, slow: bool = False) -> str:
    head = f"name: {name}\n" if name else ""
    prompt = f"slow from {origin}" if slow else f"answer from {origin}"
    return (
        f"{head}execution:\n  target: agent\n  threshold: 0.5\ntests:\n  - id: t\n    input: {prompt}\n"
        "    assertions:\n      - {type: contains, value: alpha}\n      - {type: contains, value: beta}\n"
    )


def write_project(
    root: Path, *, names: tuple[str | None, str | None] = (None, None), slow_b: bool = False
) -> Path:
    (root / ".git").mkdir(parents=True)
    (root / ".agentv").mkdir()
    (root / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: agent\n    provider: cli\n"
        f"    command: {sys.executable} {root / 'agent.py'} {{PROMPT_FILE}} {{OUTPUT_FILE}}\n",
        encoding="utf-8",
    )
    (root / "agent.py").write_text(AGENT, encoding="utf-8")
    for suite in ("a", "b"):
        (root / f"answer-{suite}.txt").write_text("alpha beta", encoding="utf-8")
    for (suite, name), slow in zip(zip(("a", "b"), names, strict=True), (False, slow_b), strict=True):
        (root / "evals" / suite).mkdir(parents=True)
        (root / "evals" / suite / "EVAL.yaml").write_text(
            eval_yaml(suite, name=name, slow=slow), encoding="utf-8"
        )
    return root


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    return run_cli(*args, cwd=root, env=env, timeout=300)


def rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_validate_reports_a_shared_suite_name_at_the_second_file_naming_the_first(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p")
    # Two more files named `shared` (the second at its `name:` line), and an unrelated error: all
    # reported at once.
    (project / "evals" / "c.eval.yaml").write_text(eval_yaml("c", name="shared"), encoding="utf-8")
    (project / "evals" / "d.eval.yaml").write_text(
        "# the second\n" + eval_yaml("d", name="shared") + "      - {type: no-such-grader}\n",
        encoding="utf-8",
    )
    checked = cli(project, "validate", "evals")
    assert checked.returncode == 2, checked.stdout + checked.stderr
    out = checked.stdout
    assert (
        "evals/b/EVAL.yaml:1:1: error[E116]: suite name 'EVAL' is also the suite of evals/a/EVAL.yaml"
    ) in out
    assert (
        "evals/d.eval.yaml:2:1: error[E116]: suite name 'shared' is also the suite of evals/c.eval.yaml:1:1"
        in out
    )
    assert "hint: give each eval file its own suite name: `name:`" in out
    assert "error[E201]: unknown grader type 'no-such-grader'" in out  # the other error too
    assert "evals/a/EVAL.yaml:1:1: error[E116]" not in out  # the first is not blamed
    assert "evals/c.eval.yaml:1:1: error[E116]" not in out


def test_run_refuses_a_shared_suite_name_before_anything_runs(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p")
    for args in ((), ("--update-baseline",), ("--resume",)):
        out = project / "out"
        if args == ("--resume",):
            out.mkdir()
            (out / "index.jsonl").write_text("")
        refused = cli(project, "run", "evals", "-o", "out", "-q", *args)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert "evals/b/EVAL.yaml:1:1: error[E116]" in refused.stderr
        assert not (project / "ran").exists()  # the agent never ran
        assert not (out / "plan.jsonl").exists() and not (out / "summary.json").exists()
        assert not list((project / "evals").rglob("*.baseline.jsonl"))  # no sidecar written
    dry = cli(project, "run", "evals", "--dry-run", "-o", "out/dry", "-q")
    assert dry.returncode == 2, dry.stdout + dry.stderr
    assert "error[E116]" in dry.stderr


def test_with_a_name_each_a_kill_in_the_second_file_is_not_a_pass_and_resume_runs_it(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p", names=("alpha", "beta"), slow_b=True)
    out = project / "out"
    index = out / "index.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-m", "agentv_ci", "run", "evals", "-o", str(out), "--workers", "2", "-q"],
        cwd=project,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (index.exists() and index.read_text().strip()):
        time.sleep(0.02)
    while time.monotonic() < deadline and len(list((project / "ran").iterdir())) < 2:
        time.sleep(0.02)  # the slow test of the second file is running
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert [(r["suite"], r["test_id"]) for r in rows(index)] == [("alpha", "t")]

    reported = cli(project, "report", "out")
    assert reported.returncode == 3, reported.stdout + reported.stderr
    assert "PASSED" not in reported.stdout

    (project / "evals" / "b" / "EVAL.yaml").write_text(eval_yaml("b", name="beta"), encoding="utf-8")
    resumed = cli(project, "run", "evals", "-o", "out", "--resume", "-q")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert sorted((r["suite"], r["test_id"]) for r in rows(index)) == [("alpha", "t"), ("beta", "t")]
    assert any("answer from b" in p.read_text() for p in (project / "ran").iterdir())


def test_with_a_name_each_sidecars_are_one_test_each_and_a_regression_in_one_file_is_caught(
    tmp_path: Path,
) -> None:
    project = write_project(tmp_path / "p", names=("alpha", "beta"))
    first = cli(project, "run", "evals", "-o", "out/first", "--update-baseline", "-q")
    assert first.returncode == 0, first.stdout + first.stderr
    for suite, name in (("a", "alpha"), ("b", "beta")):
        sidecar = rows(project / "evals" / suite / "EVAL.baseline.jsonl")
        assert [(r["suite"], r["test_id"], r["score"]) for r in sidecar] == [(name, "t", 1.0)]

    (project / "answer-b.txt").write_text("alpha", encoding="utf-8")  # file b regressed: 1.0 -> 0.5
    worse = cli(project, "run", "evals", "-o", "out/worse", "--max-regression", "0.1", "-q")
    assert worse.returncode in (0, 1), worse.stdout + worse.stderr
    # Compared with its own sidecar row, as one test (whether one attempt is gated is gates.md's call).
    compared = [line for line in worse.stdout.splitlines() if "vs baseline (1.000 -> 0.500" in line]
    assert len(compared) == 1 and "beta/t [agent]" in compared[0], worse.stdout
    assert "changed definition" not in worse.stdout


def test_validate_reports_a_suite_that_another_file_includes_or_a_test_names(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p", names=("alpha", "beta"))
    (project / "evals" / "wrapper.eval.yaml").write_text(
        "execution:\n  threshold: 0.9\ntests:\n  - include: a/EVAL.yaml\n    type: suite\n", encoding="utf-8"
    )
    (project / "evals" / "z.eval.yaml").write_text(
        eval_yaml("z").replace("  - id: t\n", "  - id: t\n    suite: beta\n"), encoding="utf-8"
    )
    checked = cli(project, "validate", "evals")
    assert checked.returncode == 2, checked.stdout + checked.stderr
    out = checked.stdout
    # Sorted paths: a/EVAL.yaml first, so the wrapper (at its `tests:`) and z (at its test) are blamed.
    wrapper = "evals/wrapper.eval.yaml:3:1: error[E116]: suite name 'alpha' is also the suite of"
    assert f"{wrapper} evals/a/EVAL.yaml:1:1" in out
    assert (
        "evals/z.eval.yaml:5:5: error[E116]: suite name 'beta' is also the suite of evals/b/EVAL.yaml:1:1"
        in out
    )
    assert (
        "hint: this test's suite name comes from its `suite:`, or from the suite file it was included from"
        in out
    )
    assert out.count("error[E116]") == 2


def test_merge_refuses_two_runs_whose_rows_share_a_key_from_different_eval_files(tmp_path: Path) -> None:
    # Each file alone is valid: run apart, then merged, their `EVAL/t [agent]` rows would be one test.
    project = write_project(tmp_path / "p")
    (project / "answer-b.txt").write_text("gamma", encoding="utf-8")  # file b's test fails
    first = cli(project, "run", "evals/a", "-o", "out/a", "-q")
    assert first.returncode == 0, first.stdout + first.stderr
    second = cli(project, "run", "evals/b", "-o", "out/b", "-q")
    assert second.returncode == 1, second.stdout + second.stderr
    merged = cli(project, "merge", "out/b", "out/a", "-o", "out/merged")
    assert merged.returncode == 2, merged.stdout + merged.stderr
    assert "EVAL/t [agent]" in merged.stderr and "evals/b/EVAL.yaml" in merged.stderr
    assert "evals/a/EVAL.yaml" in merged.stderr and "E116" in merged.stderr
    assert not (project / "out" / "merged" / "summary.json").exists()
