"""End to end: a base run in one checkout, a head run in another (other path), then `compare` and
`run --baseline`. A test whose grader was edited is `changed` and never gates; a test with the same
definition whose answer got worse still is a regression."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.cli_helpers import run_cli

AGENT = """\
import pathlib, sys
pathlib.Path(sys.argv[1]).write_text(pathlib.Path(__file__).with_name("answer.txt").read_text())
"""

EVAL = """\
name: e2e
execution:
  target: agent
  threshold: 0.5
tests:
  - id: stable
    input: Say the words
    assertions:
      - {type: contains, value: alpha}
      - {type: contains, value: beta}
  - id: edited
    input: Say the words
    assertions:
      - {type: contains, value: alpha}
      - {type: contains, value: beta}
"""


def checkout(root: Path, *, answer: str, eval_text: str = EVAL) -> Path:
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
    (root / "evals" / "e2e.eval.yaml").write_text(eval_text, encoding="utf-8")
    return root


def run_in(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    return run_cli(*args, cwd=root, env=env, timeout=300)


def test_an_edited_test_is_changed_and_only_the_real_regression_gates(tmp_path: Path) -> None:
    base = checkout(tmp_path / "tmp-worktree" / "base", answer="alpha beta")
    # head: another path; `edited` now asks for gamma (its score drops to 0.5, still passing);
    # `stable` is unchanged, but the agent's answer lost "beta" (0.5: a regression of the agent)
    head_eval = EVAL.replace(
        "  - id: edited\n    input: Say the words\n    assertions:\n      - {type: contains, value: alpha}\n"
        "      - {type: contains, value: beta}",
        "  - id: edited\n    input: Say the words\n    assertions:\n      - {type: contains, value: alpha}\n"
        "      - {type: contains, value: gamma}",
    )
    assert head_eval != EVAL
    head = checkout(tmp_path / "checkout", answer="alpha", eval_text=head_eval)
    assert run_in(base, "run", "evals", "-o", "out").returncode == 0
    done = run_in(head, "run", "evals", "-o", "out", "--no-fail")
    assert done.returncode == 0, done.stderr
    rows = {
        json.loads(line)["test_id"]: json.loads(line)
        for line in (head / "out" / "index.jsonl").read_text().splitlines()
    }
    base_rows = {
        json.loads(line)["test_id"]: json.loads(line)
        for line in (base / "out" / "index.jsonl").read_text().splitlines()
    }
    assert rows["stable"]["fingerprint"] == base_rows["stable"]["fingerprint"]  # same definition, other path
    assert rows["edited"]["fingerprint"] != base_rows["edited"]["fingerprint"]
    assert (rows["stable"]["score"], rows["edited"]["score"]) == (0.5, 0.5)

    compared = run_in(
        head, "compare", str(base / "out" / "index.jsonl"), "out/index.jsonl", "--max-regression", "0.1"
    )
    assert compared.returncode == 1, compared.stderr  # `stable` regressed by 0.5
    lines = {
        line.split()[1]: line for line in compared.stdout.splitlines() if line.startswith(("changed", "regr"))
    }
    assert lines["e2e/edited"].startswith("changed") and "definition changed" in lines["e2e/edited"]
    assert lines["e2e/stable"].startswith("regressed")
    assert "e2e/stable" in compared.stderr and "e2e/edited" not in compared.stderr

    gated = run_in(
        head, "run", "evals", "-o", "out2", "--baseline", str(base / "out"), "--max-regression", "0.1"
    )
    assert gated.returncode == 1
    assert "e2e/stable [agent]: regressed vs baseline" in gated.stdout + gated.stderr
    assert "e2e/edited [agent]: regressed" not in gated.stdout + gated.stderr


def test_a_threshold_given_on_the_command_line_keeps_the_baseline_comparable(tmp_path: Path) -> None:
    """A baseline recorded without `--threshold` (a sidecar written locally, an artifact of another
    workflow) and a head run with `--threshold 0` (the Action's `threshold` input): the tests are
    the same tests, so a real regression still fails `--max-regression`. Hashing the command-line
    bar made every test `changed`, and the 1.0 -> 0.5 drop passed."""
    base = checkout(tmp_path / "base", answer="alpha beta")
    assert run_in(base, "run", "evals", "-o", str(tmp_path / "b"), "-q").returncode == 0
    head = checkout(tmp_path / "head", answer="alpha")
    done = run_in(
        head, "run", "evals", "-o", str(tmp_path / "h"), "--baseline", str(tmp_path / "b"),
        "--threshold", "0", "--max-regression", "0.1", "-q",
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "changed definition" not in done.stdout
    assert "e2e/stable [agent]: regressed vs baseline (1.000 -> 0.500)" in done.stdout
    # a threshold written in the eval file is part of the test: a different test
    edited = checkout(tmp_path / "edited", answer="alpha beta", eval_text=EVAL.replace("0.5", "0.9"))
    again = run_in(edited, "run", "evals", "-o", str(tmp_path / "e"), "--baseline", str(tmp_path / "b"), "-q")
    assert "2 test(s) changed definition since the baseline" in again.stdout, again.stdout
