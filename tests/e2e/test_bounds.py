"""Bounded work (issue 19, item 6): attempts, turns, targets and the matrix of a run have documented
upper bounds. A value over its bound is a located error (E115, exit 2) in `validate` and in `run`,
before anything runs; a flag over its bound is a usage error (exit 2) naming it. Values at the
bound are accepted. Every case runs the real CLI in a subprocess. (The matrix: test_matrix_bound.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentv_ci.model.bounds import MAX_ATTEMPTS, MAX_TARGETS, MAX_TURNS
from tests.cli_helpers import run_cli

GRADER = "    assertions:\n      - type: contains\n        value: 'yes'\n"
ONE_TEST = f"tests:\n  - id: a\n    input: hi\n{GRADER}"


def _project(tmp_path: Path, eval_yaml: str, *, targets: int = 1) -> Path:
    (tmp_path / ".git").mkdir()
    names = ["default"] + [f"t{i}" for i in range(1, targets)]
    (tmp_path / "targets.yaml").write_text(
        "targets:\n" + "".join(f"  - name: {n}\n    provider: mock\n    response: 'no'\n" for n in names)
    )
    (tmp_path / "s.eval.yaml").write_text(eval_yaml)
    return tmp_path


def _turns(count: int) -> str:
    return "".join(f"      - input: turn {i}\n" for i in range(count))


def _targets(count: int) -> str:
    return "[" + ", ".join(["default"] + [f"t{i}" for i in range(1, count)]) + "]"


# name -> (eval file, the line:col of the offending value, a phrase the error must hold)
OVER: dict[str, tuple[str, str, str]] = {
    "trials 1e9": (
        f"name: s\nexecution:\n  trials:\n    count: 1000000000\n{ONE_TEST}",
        "4:12",
        f"at most {MAX_ATTEMPTS} (the bound on attempts per test), got 1000000000",
    ),
    "trials 1e20 (a float)": (
        f"name: s\nexecution:\n  trials:\n    count: 1e20\n{ONE_TEST}",
        "4:12",
        f"an integer from 1 to {MAX_ATTEMPTS}",
    ),
    "a test's repeat.count": (
        "name: s\ntests:\n  - id: a\n    input: hi\n    execution:\n      repeat: {count: 5000000}\n"
        + GRADER,
        "6:23",
        "count must be at most 100",
    ),
    "repeat as a number": (
        f"name: s\nexecution:\n  repeat: 1000000000\n{ONE_TEST}",
        "3:11",
        "repeat must be at most 100",
    ),
    "runs just over": (
        f"name: s\nexecution:\n  runs: {{count: {MAX_ATTEMPTS + 1}}}\n{ONE_TEST}",
        "3:17",
        f"got {MAX_ATTEMPTS + 1}",
    ),
    "conversation turns": (
        "name: s\ntests:\n  - id: a\n    mode: conversation\n    turns:\n" + _turns(10_000) + GRADER,
        f"{6 + MAX_TURNS}:9",
        f"at most {MAX_TURNS} turns (their bound), got 10000",
    ),
    "targets of one test": (
        f"name: s\nexecution:\n  targets: {_targets(MAX_TARGETS + 1)}\n{ONE_TEST}",
        f"3:{len('  targets: ' + _targets(MAX_TARGETS + 1).split(f't{MAX_TARGETS}')[0]) + 1}:",
        f"at most {MAX_TARGETS} targets (the bound on the matrix), got {MAX_TARGETS + 1}",
    ),
}


@pytest.mark.parametrize("case", list(OVER))
def test_validate_and_run_refuse_a_value_over_its_bound_at_its_location(tmp_path: Path, case: str) -> None:
    eval_yaml, where, phrase = OVER[case]
    project = _project(tmp_path, eval_yaml, targets=MAX_TARGETS + 1)
    located = f"s.eval.yaml:{where}"
    checked = run_cli("validate", "s.eval.yaml", cwd=project, timeout=120)
    assert checked.returncode == 2, checked.stdout + checked.stderr
    assert located in checked.stdout, checked.stdout
    assert phrase in checked.stdout
    ran = run_cli("run", "s.eval.yaml", "-o", "out", cwd=project, timeout=120)
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert located in ran.stderr and phrase in ran.stderr
    assert "nothing was run" in ran.stderr
    assert not (project / "out" / "index.jsonl").exists()  # refused before anything ran
    assert "Traceback" not in ran.stderr + checked.stderr


def test_a_dataset_line_over_the_bound_is_located_at_its_line(tmp_path: Path) -> None:
    lines = [{"id": f"c{i}", "input": "hi", "expected_output": "yes"} for i in range(5)]
    lines[3]["execution"] = {"trials": {"count": 10**9}}
    project = _project(tmp_path, f"name: s\ntests: ./cases.jsonl\n{GRADER.replace('    ', '', 1)}")
    (project / "cases.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    for args in (("validate", "s.eval.yaml"), ("run", "s.eval.yaml", "-o", "out")):
        done = run_cli(*args, cwd=project, timeout=120)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "cases.jsonl:4:" in done.stdout + done.stderr
        assert "E115" in done.stdout + done.stderr
    assert not (project / "out" / "index.jsonl").exists()


@pytest.mark.parametrize(
    ("flags", "phrase"),
    [
        (("--repeat", "1000000000"), f"--repeat must be from 1 to {MAX_ATTEMPTS}"),
        (("--repeat", str(MAX_ATTEMPTS + 1)), f"got {MAX_ATTEMPTS + 1}"),
        (("--repeat", "0"), "--repeat must be from 1"),
        (("--workers", "1000000000"), "--workers must be from 1 to 1000"),
        (
            tuple(arg for i in range(MAX_TARGETS + 1) for arg in ("--target", f"t{i}")),
            f"--target names at most {MAX_TARGETS} targets",
        ),
    ],
    ids=["repeat-1e9", "repeat-101", "repeat-0", "workers-1e9", "targets-51"],
)
def test_run_flags_over_their_bound_are_usage_errors(
    tmp_path: Path, flags: tuple[str, ...], phrase: str
) -> None:
    project = _project(tmp_path, f"name: s\ntests:\n  - id: a\n    input: hi\n{GRADER}")
    ran = run_cli("run", "s.eval.yaml", "-o", "out", *flags, cwd=project, timeout=60)
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert phrase in ran.stderr
    assert not (project / "out").exists()  # nothing loaded, planned or written


def test_validate_refuses_too_many_cli_targets(tmp_path: Path) -> None:
    project = _project(tmp_path, f"name: s\ntests:\n  - id: a\n    input: hi\n{GRADER}")
    many = [arg for i in range(MAX_TARGETS + 1) for arg in ("--target", f"t{i}")]
    checked = run_cli("validate", "s.eval.yaml", *many, cwd=project, timeout=60)
    assert checked.returncode == 2
    assert f"at most {MAX_TARGETS} targets" in checked.stderr


def test_values_at_their_bounds_are_accepted(tmp_path: Path) -> None:
    suite = (
        f"name: s\nexecution:\n  targets: {_targets(MAX_TARGETS)}\n  trials: {{count: {MAX_ATTEMPTS}}}\n"
        f"tests:\n  - id: a\n    input: hi\n{GRADER}"
        f"  - id: talk\n    mode: conversation\n    turns:\n{_turns(MAX_TURNS)}"
    )
    project = _project(tmp_path, suite, targets=MAX_TARGETS)
    checked = run_cli("validate", "s.eval.yaml", cwd=project, timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_attempts_at_the_bound_all_run(tmp_path: Path) -> None:
    """`--repeat 100` runs: 100 attempts of a failing test against the mock target, one row."""
    project = _project(tmp_path, f"name: s\ntests:\n  - id: a\n    input: hi\n{GRADER}")
    ran = run_cli(
        "run", "s.eval.yaml", "-o", "out", "--repeat", str(MAX_ATTEMPTS), "-q", cwd=project, timeout=120
    )
    assert ran.returncode == 1, ran.stdout + ran.stderr  # the answer is "no": the gate fails
    (row,) = [json.loads(line) for line in (project / "out" / "index.jsonl").read_text().splitlines()]
    assert row["aggregation"]["total_attempts"] == MAX_ATTEMPTS
