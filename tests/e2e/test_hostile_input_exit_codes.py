"""Bad input is exit 2 with file:line, never exit 4 (issue 19, item 7): huge numbers in every numeric
setting, deep nesting in results rows, summaries and event files, usage errors of every command, a
cli target whose `cwd` is missing. Each case runs the real CLI in a subprocess."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import mock_project, run_cli

BIG = int("9" * 400)

# Each numeric setting, as the fragment of a test (or, for execution/workspace, of the suite) that
# carries it. "N" stands for the hostile number.
SETTINGS: dict[str, dict[str, Any]] = {
    "threshold": {"execution": {"threshold": "N"}},
    "timeout_seconds": {"execution": {"timeout_seconds": "N"}},
    "budget_usd": {"execution": {"budget_usd": "N"}},
    "trials": {"execution": {"trials": {"count": "N"}}},
    "weight": {"assertions": [{"type": "contains", "value": "h", "weight": "N"}]},
    "required": {"assertions": [{"type": "contains", "value": "h", "required": "N"}]},
    "min_score": {"assertions": [{"type": "contains", "value": "h", "min_score": "N"}]},
    "rubric weight": {
        "assertions": [{"type": "llm-grader", "rubrics": [{"id": "r", "outcome": "x", "weight": "N"}]}]
    },
    "hook timeout_ms": {"workspace": {"hooks": {"before_all": {"command": ["true"], "timeout_ms": "N"}}}},
    "field tolerance": {
        "assertions": [
            {
                "type": "field-accuracy",
                "fields": [{"path": "a", "match": "numeric_tolerance", "tolerance": "N"}],
            }
        ]
    },
    "expected_output": {"expected_output": "N"},
    "metadata": {"metadata": {"n": "N"}},
    "tool minimums": {
        "assertions": [{"type": "tool-trajectory", "mode": "any_order", "minimums": {"x": "N"}}]
    },
}


def _fill(value: Any, number: int) -> Any:
    if value == "N":
        return number
    if isinstance(value, dict):
        return {k: _fill(v, number) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, number) for v in value]
    return value


def _write_suite(directory: Path, setting: str, form: str, name: str = "s") -> Path:
    test: dict[str, Any] = {"id": "a", "input": "hi", "assertions": [{"type": "contains", "value": "h"}]}
    suite: dict[str, Any] = {}
    for key, value in _fill(SETTINGS[setting], BIG).items():
        (suite if key in ("execution", "workspace") else test)[key] = value
    directory.mkdir(parents=True)
    header = f"name: {name}\n" + "".join(f"{key}: {json.dumps(value)}\n" for key, value in suite.items())
    if form == "jsonl":
        (directory / "cases.jsonl").write_text(json.dumps(test) + "\n")
        text = header + "tests: ./cases.jsonl\n"
    else:
        text = header + "tests:\n  - " + json.dumps(test) + "\n"
    mock_project(directory, response="hello", eval_file="s.eval.yaml", eval_yaml=text)
    return directory / "s.eval.yaml"


@pytest.mark.parametrize("form", ["yaml", "jsonl"])
def test_a_400_digit_number_is_bad_input_at_its_line(tmp_path: Path, form: str) -> None:
    """Each setting in an eval file (or dataset) of its own, all under one directory: `validate` and
    `run` each check every file and name each one (one process each, not one per setting)."""
    evals = tmp_path / "evals"
    expected: dict[str, str] = {}
    for index, setting in enumerate(sorted(SETTINGS)):
        eval_file = _write_suite(evals / f"setting{index}", setting, form, name=f"s{index}")
        in_test = not SETTINGS[setting].keys() & {"execution", "workspace"}
        where = "cases.jsonl:1:" if form == "jsonl" and in_test else "s.eval.yaml:"
        expected[setting] = f"{eval_file.parent.name}/{where}"
    for args in (("validate", str(evals)), ("run", str(evals), "-o", str(tmp_path / "out"), "-q")):
        done = run_cli(*args, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stderr)
        assert "internal error" not in done.stderr and "Traceback" not in done.stderr
        for setting, where in expected.items():
            located = re.compile(re.escape(where) + r"[\d:]*\d: error\[E\d+\]")
            assert located.search(done.stdout + done.stderr), (args, setting, done.stdout, done.stderr)
    assert not (tmp_path / "out" / "index.jsonl").exists()  # refused before anything ran


def test_an_integer_that_fits_64_bits_still_loads(tmp_path: Path) -> None:
    evals = tmp_path / "evals"
    mock_project(
        evals,
        response="hello",
        eval_file="s.eval.yaml",
        eval_yaml="name: s\ntests:\n  - id: a\n    input: hi\n    metadata: {n: 18446744073709551615}\n"
        "    assertions: [{type: contains, value: h}]\n",
    )
    done = run_cli("run", str(evals), "-o", str(tmp_path / "out"), "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr


@pytest.fixture
def finished_run(tmp_path: Path) -> Path:
    evals = mock_project(
        tmp_path / "evals",
        response="hello",
        eval_file="s.eval.yaml",
        eval_yaml="name: s\ntests:\n  - {id: a, input: hi, assertions: [{type: contains, value: h}]}\n",
    )
    done = run_cli("run", str(evals), "-o", str(tmp_path / "good"), "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return tmp_path / "good"


def _deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_a_deep_results_row_is_bad_input_for_report_compare_and_merge(finished_run: Path) -> None:
    hostile = finished_run.parent / "hostile"
    hostile.mkdir()
    row = json.loads((finished_run / "index.jsonl").read_text().splitlines()[0])
    text = json.dumps(row)[:-1] + ', "x": ' + _deep(3000) + "}\n"
    (hostile / "index.jsonl").write_text(text)
    for args in (
        ("report", str(hostile)),
        ("compare", str(finished_run), str(hostile)),
        ("merge", str(hostile), str(finished_run), "-o", str(finished_run.parent / "merged")),
    ):
        done = run_cli(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert f"{hostile / 'index.jsonl'}:1:" in done.stderr and "nested more than 200" in done.stderr


def test_a_deep_summary_is_bad_input(finished_run: Path) -> None:
    (finished_run / "summary.json").write_text('{"x": ' + _deep(100_000) + "}")
    done = run_cli("report", str(finished_run))
    assert done.returncode == 2, done.stderr
    assert "summary.json" in done.stderr and "nested more than 200" in done.stderr


def test_resume_reruns_a_deep_row_instead_of_crashing(finished_run: Path) -> None:
    index = finished_run / "index.jsonl"
    index.write_text('{"test_id": "a", "x": ' + _deep(5000) + "}\n")
    evals = finished_run.parent / "evals"
    done = run_cli("run", str(evals), "-o", str(finished_run), "--resume", "-q")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in index.read_text().splitlines()]
    assert [r["test_id"] for r in rows] == ["a"] and rows[0]["execution_status"] == "ok"


def test_a_deep_event_file_is_bad_input_for_the_action(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text('{"x": ' + _deep(100_000) + "}")
    env = {
        **os.environ,
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_WORKSPACE": str(tmp_path),
    }
    done = run_cli("action", cwd=tmp_path, env=env)
    assert done.returncode == 2, done.stderr
    assert "nested more than 200 levels" in done.stderr and "internal error" not in done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("validate", "--allow-outside-repo"),
        ("run", "--workers"),
        ("run", "--shard", "x/y", "."),
        ("run", "--no-such-flag"),
        ("report",),
        ("merge",),
        ("compare", "only-one"),
        ("discover", "--base"),
        ("grade",),
        ("plugins", "new"),
        ("schema", "--nope"),
        ("action", "--nope"),
    ],
)
def test_usage_errors_of_every_command_exit_2(tmp_path: Path, args: tuple[str, ...]) -> None:
    done = run_cli(*args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr


def test_a_cli_target_whose_cwd_is_missing_is_bad_input_located_in_targets_yaml(tmp_path: Path) -> None:
    evals = tmp_path / "evals"
    (evals / ".agentv").mkdir(parents=True)
    (evals / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: cli\n"
        "    command: echo hi > {OUTPUT_FILE}\n    cwd: ./gone\n"
    )
    (evals / "s.eval.yaml").write_text(
        "name: s\ntests:\n  - {id: a, input: hi, assertions: [{type: contains, value: h}]}\n"
    )
    done = run_cli("run", str(evals), "-o", str(tmp_path / "out"), "-q", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "targets.yaml:5:" in done.stderr and "'./gone' is not a directory" in done.stderr
