"""Adaptive repeats (issue 27 item 4), end to end with a stochastic `cli` agent
(tests/fakes/rate_agent.py, a pass rate per test, seeded by the attempt): `run --adaptive-repeats 20`
catches a 1.0 -> 0.5 drop against a 20-repeat baseline and names it; decided tests stop early and
their rows say how many attempts they used and why; an unchanged agent is not blocked; the response
cache keys on the attempt; the cost estimate's high end counts MAX attempts."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from tests.cli_helpers import run_cli
from tests.fakes.rate_agent import passes

AGENT = Path(__file__).resolve().parent.parent / "fakes" / "rate_agent.py"
TARGETS = f"""\
targets:
  - name: default
    provider: cli
    command: {sys.executable} -S {AGENT} {{PROMPT}} {{ATTEMPT}} {{OUTPUT_FILE}}
    env:
      AGENT_SEED: ${{{{ AGENT_SEED }}}}
      AGENT_RATES: ${{{{ AGENT_RATES }}}}
      AGENT_LOG: ${{{{ AGENT_LOG }}}}
"""


def _eval(tests: dict[str, float], threshold: float | None = None) -> str:
    head = "execution:\n  repeat: {count: 1, strategy: mean}\n"
    if threshold is not None:
        head += f"  threshold: {threshold}\n"
    body = "".join(
        f"  - id: {name}\n    input: id={name} p={rate}\n    assertions: [{{type: equals, value: PASS}}]\n"
        for name, rate in tests.items()
    )
    return head + "tests:\n" + body


def _project(root: Path, tests: dict[str, float], threshold: float | None = None) -> Path:
    (root / ".agentv").mkdir(parents=True)
    (root / ".agentv" / "targets.yaml").write_text(TARGETS, encoding="utf-8")
    (root / "evals").mkdir()
    (root / "evals" / "coins.eval.yaml").write_text(_eval(tests, threshold), encoding="utf-8")
    return root


def _env(logs: Path, seed: str, rates: str = "none=1") -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "AGENT_"))}
    return {**base, "AGENT_SEED": seed, "AGENT_RATES": rates, "AGENT_LOG": str(logs / f"calls-{seed}.log")}


def _rows(run: Path) -> dict[str, dict[str, object]]:
    lines = (run / "index.jsonl").read_text(encoding="utf-8").splitlines()
    return {row["test_id"]: row for row in map(json.loads, lines)}


def _baseline(root: Path, seed: str = "base") -> Path:
    out = root / "base"
    done = run_cli(
        "run", "evals", "-q", "--repeat", "20", "-o", str(out), cwd=root, env=_env(root, seed), timeout=300
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return out


def test_adaptive_repeats_catch_a_drop_from_1_to_half_and_name_it(tmp_path: Path) -> None:
    root = _project(tmp_path, {"solid": 1, "wobbly": 1})
    base = _baseline(root)
    assert {r["aggregation"]["passed_attempts"] for r in _rows(base).values()} == {20}  # type: ignore[index]

    done = run_cli(
        "run", "evals", "--adaptive-repeats", "20", "--baseline", str(base / "index.jsonl"),
        "--min-pass-rate", "0", "--max-regression", "0.1", "-o", str(root / "head"),
        cwd=root, env=_env(root, "head", rates="wobbly=0.5"), timeout=300,
    )  # fmt: skip

    assert done.returncode == 1, done.stdout + done.stderr
    verdict = next(line for line in done.stdout.splitlines() if line.startswith("RESULT:"))
    assert "coins/wobbly [default]: broken vs baseline (1.000 -> " in verdict, done.stdout
    assert "passes 20/20 -> " in verdict and "solid" not in verdict
    rows = _rows(root / "head")
    wobbly = rows["wobbly"]["adaptive"]
    assert wobbly["stopped"] in ("regression-decided", "max"), wobbly  # type: ignore[index]
    assert wobbly["attempts"] == rows["wobbly"]["aggregation"]["total_attempts"]  # type: ignore[index]
    assert wobbly["attempts"] > 1  # type: ignore[index]


def test_decided_tests_stop_early_and_say_why(tmp_path: Path) -> None:
    # threshold 0.5: 8 straight passes put the Clopper-Pearson interval (each side at 5% / 6 looks)
    # above it, 8 straight fails below it (looks at 1, 2, 4 and 8 attempts)
    root = _project(tmp_path, {"solid": 1, "dead": 0}, threshold=0.5)

    done = run_cli(
        "run", "evals", "-q", "--adaptive-repeats", "20", "-o", str(root / "run"),
        cwd=root, env=_env(root, "s"), timeout=300,
    )  # fmt: skip

    assert done.returncode == 1, done.stdout + done.stderr  # `dead` fails
    rows = _rows(root / "run")
    assert rows["solid"]["adaptive"] == {"attempts": 8, "stopped": "decided-pass"}
    assert rows["dead"]["adaptive"] == {"attempts": 8, "stopped": "decided-fail"}
    assert (rows["solid"]["verdict"], rows["dead"]["verdict"]) == ("pass", "fail")
    calls = (root / "calls-s.log").read_text(encoding="utf-8").splitlines()
    assert len(calls) == 16  # nothing past the looks that decided


def test_an_unchanged_agent_is_not_blocked(tmp_path: Path) -> None:
    rates = {f"t{n}": rate for n, rate in enumerate([1, 1, 0.9, 0.8, 0.7, 0.6, 0.5, 1])}
    root = _project(tmp_path, rates)
    base = _baseline(root)

    done = run_cli(
        "run", "evals", "--adaptive-repeats", "20", "--baseline", str(base / "index.jsonl"),
        "--min-pass-rate", "0", "--max-regression", "0.1", "-o", str(root / "head"),
        cwd=root, env=_env(root, "head"), timeout=300,
    )  # fmt: skip

    assert done.returncode == 0, done.stdout + done.stderr
    used = [row["adaptive"]["attempts"] for row in _rows(root / "head").values()]  # type: ignore[index]
    assert len(used) == 8 and all(1 <= n <= 20 for n in used)


def test_each_attempt_is_its_own_sample_in_the_cache(tmp_path: Path) -> None:
    root = _project(tmp_path / "project", {"coin": 0.5}, threshold=0.5)  # the runs are written outside it
    args = (
        "run",
        "evals",
        "-q",
        "--adaptive-repeats",
        "4",
        "--cache",
        "--cache-dir",
        str(tmp_path / "cache"),
    )
    # a seed that gives the attempts both answers
    seed = next(
        f"s{n}" for n in range(100) if len({passes(f"s{n}", "id=coin p=0.5", str(a)) for a in range(4)}) == 2
    )
    expected = [passes(seed, "id=coin p=0.5", str(n)) for n in range(4)]

    first = run_cli(*args, "-o", str(tmp_path / "one"), cwd=root, env=_env(tmp_path, seed), timeout=300)
    second = run_cli(*args, "-o", str(tmp_path / "two"), cwd=root, env=_env(tmp_path, seed), timeout=300)

    assert first.returncode in (0, 1) and second.returncode == first.returncode, first.stderr + second.stderr
    for run in ("one", "two"):
        row = _rows(tmp_path / run)["coin"]
        assert [t["verdict"] == "pass" for t in row["trials"]] == expected  # type: ignore[union-attr]
    # every attempt was sent once (the first run), none answered from attempt 0's entry
    assert sorted((tmp_path / f"calls-{seed}.log").read_text(encoding="utf-8").splitlines()) == [
        f"id=coin {n}" for n in range(4)
    ]


def test_adaptive_repeats_out_of_bounds_is_a_usage_error(tmp_path: Path) -> None:
    root = _project(tmp_path, {"solid": 1})
    done = run_cli("run", "evals", "--adaptive-repeats", "0", cwd=root, env=_env(root, "s"), timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--adaptive-repeats must be from 1 to 100" in done.stderr and "Traceback" not in done.stderr
