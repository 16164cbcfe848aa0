"""A gate that knows noise (issue 27), end to end with a stochastic `cli` agent
(tests/fakes/stochastic_agent.py): 24 tests whose pass probabilities are 0.5-1.0, 8 repeats each,
`--max-regression 0.1 --min-pass-rate 0` (only the regression gate), as the issue's trial.

- A/A: the same agent against its own baseline is not blocked, on a pair of samples where judging
  each test on its own at 95% would have blocked (a drop with an uncorrected p below 0.05);
- a broken test (always passed, now never does) is blocked and named, with its evidence.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from tests.fakes.stochastic_agent import TARGETS_YAML, passes

pytestmark = pytest.mark.slow  # three runs of 192 agent processes each

RATES = [0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
TESTS = [(f"t{i}", RATES[i % len(RATES)]) for i in range(24)]
REPEATS = 8
TARGETS = TARGETS_YAML


def _eval() -> str:
    lines = [f"execution:\n  repeat: {{count: {REPEATS}, strategy: mean}}\ntests:"]
    for test_id, rate in TESTS:
        lines.append(f"  - id: {test_id}\n    input: id={test_id} p={rate}")
        lines.append("    assertions: [{type: equals, value: PASS}]")
    return "\n".join(lines) + "\n"


def _passes(seed: str, broken: str = "none") -> dict[str, int]:
    """Each test's passes over its attempts, as the agent will draw them (attempts 0..REPEATS-1)."""
    return {
        test_id: sum(passes(seed, f"id={test_id} p={rate}", str(a), broken) for a in range(REPEATS))
        for test_id, rate in TESTS
    }


def _uncorrected_block(base: dict[str, int], head: dict[str, int]) -> bool:
    """What judging each test on its own at 95% (the old gate) says: some drop > 0.1 with p < 0.05."""
    from scipy.stats import fisher_exact

    for test_id in base:
        b, h = base[test_id], head[test_id]
        drop = (b - h) / REPEATS
        table = [[b, REPEATS - b], [h, REPEATS - h]]
        if drop > 0.1 and fisher_exact(table, alternative="greater").pvalue < 0.05:
            return True
    return False


def _seeds() -> tuple[str, str]:
    """A base/head pair of seeds on which the uncorrected gate would block an unchanged agent."""
    pytest.importorskip("scipy.stats")
    base = _passes("base")
    for n in range(200):
        if _uncorrected_block(base, _passes(f"head{n}")):
            return "base", f"head{n}"
    raise AssertionError("no seed pair shows the uncorrected false block")


def _project(root: Path) -> Path:
    (root / ".agentv").mkdir(parents=True)
    (root / ".agentv" / "targets.yaml").write_text(TARGETS, encoding="utf-8")
    (root / "evals").mkdir()
    (root / "evals" / "coins.eval.yaml").write_text(_eval(), encoding="utf-8")
    return root


def _run(root: Path, seed: str, out: str, *args: str, broken: str = "none") -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "AGENT_"))}
    env.update(AGENT_SEED=seed, AGENT_BROKEN=broken)
    result = run_cli("run", "evals", "-o", out, "--workers", "16", *args, cwd=root, env=env)
    assert result.returncode in (0, 1), result.stdout + result.stderr
    return result.returncode, result.stdout + result.stderr


def test_an_unchanged_agent_is_not_blocked_and_a_broken_test_is(tmp_path: Path) -> None:
    base_seed, head_seed = _seeds()
    root = _project(tmp_path / "repo")
    _run(root, base_seed, "base", "--min-pass-rate", "0")
    rows = [json.loads(line) for line in (root / "base" / "index.jsonl").read_text().splitlines()]
    assert {r["test_id"] for r in rows} == {t for t, _ in TESTS}
    gate = ("--baseline", "base/index.jsonl", "--max-regression", "0.1", "--min-pass-rate", "0")

    code, out = _run(root, head_seed, "aa", *gate)
    assert code == 0, out  # the uncorrected per-test gate would have blocked this A/A pair
    assert "PASSED" in out
    assert "corrected" in out  # the drops are notes, with the corrected p-value

    broken = "id=t5"  # t5 has p = 1.0: 8/8 in the baseline, 0/8 now
    code, out = _run(root, head_seed, "broken", *gate, broken=broken)
    assert code == 1, out
    line = next(x for x in out.splitlines() if "t5 [default]: broken vs baseline" in x)
    assert "passes 8/8 -> 0/8" in line and "corrected" in line and "CI [" in line
    assert not any(
        "broken vs baseline" in x or "regressed vs baseline" in x for x in out.splitlines() if "t5 " not in x
    )
