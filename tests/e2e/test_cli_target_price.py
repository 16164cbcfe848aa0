"""A cli target's price (issue 28 item 1): declared in targets.yaml (`pricing: {per_call_usd: ...}`)
or reported by the agent (`cost_usd` in its output file), it is what the run spent, so
`--max-cost-usd` can pass or fail the run; with neither, the gate stays inconclusive (exit 3).
`agentv-ci run` in a subprocess, the agent a real subprocess."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli

EVAL = """\
tests:
  - id: one
    input: Say hello.
    assertions:
      - type: contains
        value: hello
  - id: two
    input: Say hello again.
    assertions:
      - type: contains
        value: hello
"""
# The agent writes its answer (JSON, with `cost_usd` when REPORTED is set) to {OUTPUT_FILE}.
AGENT = """\
import json, os, sys
answer = {"text": "hello"}
if os.environ.get("REPORTED"):
    answer["cost_usd"] = float(os.environ["REPORTED"])
open(sys.argv[1], "w").write(json.dumps(answer))
"""


def _project(root: Path, pricing: str = "", reported: str | None = None) -> Path:
    (root / ".agentv").mkdir()
    env = f"\n    env: {{REPORTED: '{reported}'}}" if reported else ""
    (root / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: cli\n"
        f"    command: python agent.py {{OUTPUT_FILE}}{env}\n" + pricing,
        encoding="utf-8",
    )
    (root / "agent.py").write_text(AGENT, encoding="utf-8")
    (root / "hello.eval.yaml").write_text(EVAL, encoding="utf-8")
    return root


def _spent(root: Path) -> float:
    value = json.loads((root / "out" / "summary.json").read_text(encoding="utf-8"))["spent_usd"]
    assert isinstance(value, float)
    return value


def test_a_per_call_price_gates_max_cost_usd(tmp_path: Path) -> None:
    root = _project(tmp_path, "    pricing: {per_call_usd: 0.002}\n")

    over = run_cli("run", "hello.eval.yaml", "--max-cost-usd", "0.003", "-o", "out", cwd=root)

    assert over.returncode == 1, over.stdout + over.stderr  # before: 3, no price known
    assert "cost $0.004000 > max cost $0.003000" in over.stdout
    assert _spent(root) == pytest.approx(0.004)

    within = run_cli("run", "hello.eval.yaml", "--max-cost-usd", "0.005", "-o", "out", cwd=root)
    assert within.returncode == 0, within.stdout + within.stderr


def test_a_cost_the_agent_reports_wins_over_the_declared_price(tmp_path: Path) -> None:
    root = _project(tmp_path, "    pricing: {per_call_usd: 0.002}\n", reported="0.01")

    over = run_cli("run", "hello.eval.yaml", "--max-cost-usd", "0.015", "-o", "out", cwd=root)

    assert over.returncode == 1, over.stdout + over.stderr
    assert _spent(root) == pytest.approx(0.02)


def test_without_a_price_max_cost_usd_is_inconclusive_and_says_how_to_price_it(tmp_path: Path) -> None:
    root = _project(tmp_path)

    done = run_cli("run", "hello.eval.yaml", "--max-cost-usd", "1", "-o", "out", cwd=root)

    assert done.returncode == 3, done.stdout + done.stderr
    assert "2 answer(s) came with no price" in done.stdout


def test_a_bad_price_is_bad_input_at_its_line(tmp_path: Path) -> None:
    root = _project(tmp_path, "    pricing: {per_call_usd: -1}\n")

    done = run_cli("validate", "hello.eval.yaml", cwd=root)

    assert done.returncode == 2, done.stdout + done.stderr
    assert ".agentv/targets.yaml:5:" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
