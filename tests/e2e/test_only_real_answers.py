"""Only real answers are graded, and only real scores are kept (issue 18 point 4, issue 19 item 7).

Through the CLI in subprocesses: a model on 127.0.0.1 replying `content: null`, nothing, or a
refusal; grader plugins installed as a real distribution scoring 7 and NaN; `report`, `compare` and
`merge` on results rows scored -5, 5, NaN and a 400-digit number; `grade` with a test left
unanswered and with a 400-digit token count.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import run_cli
from tests.fakes.llm_server import FakeLlmServer, Reply
from tests.plugin_site import _distribution, run_with_site

BIG = "1" + "0" * 399  # a 400-digit number, as JSON text

NEGATED_EVAL = """\
name: answers
tests:
  - id: polite
    input: Say something rude
    assertions:
      - type: contains
        value: idiot
        negate: true
"""


def _model_project(tmp_path: Path, base_url: str) -> Path:
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: openai\n    model: gpt-4o-mini\n"
        f"    api_key: sk-test\n    base_url: {base_url}\n    max_retries: 0\n"
    )
    eval_path = tmp_path / "answers.eval.yaml"
    eval_path.write_text(NEGATED_EVAL)
    return eval_path


def _chat(message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 0},
    }


def _rows(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "index.jsonl").read_text().splitlines() if line.strip()]


@pytest.mark.parametrize(
    ("message", "finish", "reason"),
    [
        ({"content": None}, "stop", "openai: the reply had no content (finish_reason: stop)"),
        ({}, "length", "openai: the reply had no content (finish_reason: length)"),
        ({"content": None, "refusal": "I can't say that."}, "stop", "openai: refused: I can't say that."),
    ],
    ids=["null-content", "no-content", "refusal"],
)
def test_no_answer_is_an_execution_error_not_a_pass(
    tmp_path: Path, llm_server: FakeLlmServer, message: dict[str, Any], finish: str, reason: str
) -> None:
    # A negated `contains` passes an empty string: graded as one, this run would be green.
    llm_server.responder = lambda call: Reply(body=_chat(message, finish))
    eval_path = _model_project(tmp_path, llm_server.base_url)
    out = tmp_path / "out"
    proc = run_cli("run", str(eval_path), "-o", str(out), cwd=tmp_path, timeout=120)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert reason in proc.stdout + proc.stderr
    (row,) = _rows(out)
    assert row["execution_status"] == "execution_error" and row["verdict"] == "fail"
    assert row["score"] == 0.0 and reason in row["error"]
    assert row["failure_stage"] == "agent"
    assert not row.get("scores")  # nothing was graded
    # What was stored reads back the same: inconclusive, never PASSED.
    again = run_cli("report", str(out), cwd=tmp_path, timeout=120)
    assert again.returncode == 3 and "PASSED" not in again.stdout, again.stdout + again.stderr


def test_a_real_answer_still_passes_the_negated_grader(tmp_path: Path, llm_server: FakeLlmServer) -> None:
    llm_server.responder = lambda call: "I'd rather stay polite."
    eval_path = _model_project(tmp_path, llm_server.base_url)
    proc = run_cli("run", str(eval_path), "-o", str(tmp_path / "out"), cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# --------------------------------------------------------------------------- grader plugins

BROKEN_SCORES = '''
import math

import msgspec

from agentv_ci.api import GraderResult, TargetResponse, TokenUsage, Message


class NoConfig(msgspec.Struct):
    pass


class Seven:
    """Scores 7 on a 0..1 scale."""

    api_version = "1.0"
    Config = NoConfig

    def __init__(self, spec, config, *, base_dir):
        self.spec = spec

    async def grade(self, ctx):
        return GraderResult(name=self.spec.name, type=self.spec.type, score=7.0, verdict="pass")


class NotANumber:
    """Scores NaN."""

    api_version = "1.0"
    Config = NoConfig

    def __init__(self, spec, config, *, base_dir):
        self.spec = spec

    async def grade(self, ctx):
        return GraderResult(name=self.spec.name, type=self.spec.type, score=math.nan, verdict="pass")


class HugeUsage:
    """A target reporting a 400-digit token count."""

    api_version = "1.0"
    Config = NoConfig

    def __init__(self, name, config, *, base_dir):
        pass

    async def invoke(self, request):
        usage = TokenUsage(input=10**399, output=1)
        return TargetResponse(text="hello", messages=[Message(role="assistant", content="hello")],
                              token_usage=usage)

    async def aclose(self):
        return None
'''

BROKEN_ENTRY_POINTS = """\
[agentv_ci.graders]
scores-seven = broken_scores:Seven
scores-nan = broken_scores:NotANumber

[agentv_ci.targets]
huge-usage = broken_scores:HugeUsage
"""


@pytest.fixture
def broken_site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    (site / "broken_scores.py").write_text(textwrap.dedent(BROKEN_SCORES))
    _distribution(site, "broken-score-plugins", "0.1", BROKEN_ENTRY_POINTS)
    return site


def _plugin_project(tmp_path: Path, grader: str | None, *, target: str = "provider: mock") -> Path:
    """A project whose one test is graded by `grader` (named `judge-<grader>`) and `contains`."""
    project = tmp_path / "project"
    (project / ".agentv").mkdir(parents=True)
    (project / ".agentv" / "targets.yaml").write_text(
        f"targets:\n  - name: default\n    {target}\n    response: hello\n"
    )
    plugged = f"      - type: {grader}\n        name: judge-{grader}\n" if grader else ""
    contains = "      - type: contains\n        value: hello\n"
    (project / "p.eval.yaml").write_text(
        f"name: plugged\ntests:\n  - id: t1\n    input: hi\n    assertions:\n{plugged}{contains}"
    )
    return project


@pytest.mark.parametrize(
    ("grader", "problem"),
    [("scores-seven", "score 7 is outside [0, 1]"), ("scores-nan", "score nan is not a finite number")],
)
def test_a_plugin_score_outside_the_range_is_an_execution_error_naming_it(
    tmp_path: Path, broken_site: Path, grader: str, problem: str
) -> None:
    project = _plugin_project(tmp_path, grader)
    proc = run_with_site(["run", "p.eval.yaml", "-o", "out"], broken_site, project)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    (row,) = _rows(project / "out")
    assert row["execution_status"] == "execution_error" and row["verdict"] == "fail"
    assert row["score"] == 0.0
    assert f"judge-{grader}: the {grader} grader's {problem}" in row["error"]
    judged = next(s for s in row["scores"] if s["name"] == f"judge-{grader}")
    assert judged["score"] == 0.0 and judged["verdict"] == "fail"  # never 7.0, never null with a pass
    assert problem in judged["error"]
    assert f"judge-{grader}" in proc.stdout + proc.stderr
    again = run_with_site(["report", "out"], broken_site, project)
    assert again.returncode == 3, again.stdout + again.stderr  # the stored row reads back: inconclusive


def test_a_target_reporting_an_impossible_token_count_gives_a_row_report_accepts(
    tmp_path: Path, broken_site: Path
) -> None:
    project = _plugin_project(tmp_path, None, target="provider: huge-usage")
    proc = run_with_site(["run", "p.eval.yaml", "-o", "out"], broken_site, project)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    (row,) = _rows(project / "out")
    assert row["execution_status"] == "execution_error" and "token_usage" not in row
    assert "the target reported token_usage.input 100000... (400 digits) is outside" in row["error"]
    again = run_with_site(["report", "out"], broken_site, project)
    assert again.returncode == 3, again.stdout + again.stderr


# --------------------------------------------------------------------------- stored rows

GOOD_ROW = {
    "test_id": "a",
    "suite": "s",
    "target": "t",
    "score": 1.0,
    "execution_status": "ok",
    "verdict": "pass",
}


def _row_text(field: str, value: str) -> str:
    """A results row whose `field` is the JSON text `value` (the rest a passing row)."""
    if field == "tokens":
        return (
            json.dumps({**GOOD_ROW, "test_id": "b"})[:-1]
            + f', "token_usage": {{"input": {value}, "output": 1}}}}'
        )
    if field == "grader":
        grader = f'{{"name": "g", "type": "contains", "score": {value}, "verdict": "pass"}}'
        return json.dumps({**GOOD_ROW, "test_id": "b"})[:-1] + f', "scores": [{grader}]}}'
    return (
        json.dumps({**GOOD_ROW, "test_id": "b", "score": 0.5})[:-1].replace(
            '"score": 0.5', f'"score": {value}'
        )
        + "}"
    )


BAD_ROWS = [
    ("score", "-5", "score -5 is outside [0, 1]"),
    ("score", "5", "score 5 is outside [0, 1]"),
    ("score", "NaN", "score NaN is not a finite number"),
    ("score", BIG, "score 100000... (400 digits) is outside [0, 1]"),
    ("grader", "7", "grader 'g' score 7 is outside [0, 1]"),
    ("tokens", BIG, "token_usage.input 100000... (400 digits) is outside"),
]


def _results(directory: Path, second_line: str | None = None) -> Path:
    directory.mkdir(parents=True)
    lines = [json.dumps(GOOD_ROW)] + ([second_line] if second_line else [])
    (directory / "index.jsonl").write_text("\n".join(lines) + "\n")
    return directory


@pytest.mark.parametrize("command", ["report", "compare", "merge"])
@pytest.mark.parametrize(
    ("field", "value", "message"), BAD_ROWS, ids=[f"{f}={v[:4]}" for f, v, _ in BAD_ROWS]
)
def test_report_compare_and_merge_refuse_rows_with_impossible_numbers(
    tmp_path: Path, command: str, field: str, value: str, message: str
) -> None:
    bad = _results(tmp_path / "bad", _row_text(field, value))
    good = _results(tmp_path / "good")
    args = {
        "report": ["report", str(bad)],
        "compare": ["compare", str(good), str(bad)],
        "merge": ["merge", str(good), str(bad), "-o", str(tmp_path / "merged")],
    }[command]
    proc = run_cli(*args, cwd=tmp_path, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{bad / 'index.jsonl'}:2:1: error: {message}" in proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    assert not (tmp_path / "merged" / "index.jsonl").exists()  # merge wrote nothing


def test_rows_within_the_range_are_read_as_before(tmp_path: Path) -> None:
    failing = {
        **GOOD_ROW,
        "test_id": "b",
        "score": 0.25,
        "execution_status": "quality_failure",
        "verdict": "fail",
    }
    fine = _results(tmp_path / "fine", json.dumps(failing))
    proc = run_cli("report", str(fine), cwd=tmp_path, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # 0.25 < 0.8: a failure, read as one


# --------------------------------------------------------------------------- offline grading

GRADE_EVAL = """\
name: offline
tests:
  - id: one
    input: first
    assertions:
      - type: contains
        value: yes
  - id: two
    input: second
    assertions:
      - type: contains
        value: yes
"""


def test_grade_with_a_test_left_unanswered_is_inconclusive(tmp_path: Path) -> None:
    (tmp_path / "g.eval.yaml").write_text(GRADE_EVAL)
    (tmp_path / "answers.jsonl").write_text('{"test_id": "one", "output": "yes"}\n')
    proc = run_cli(
        "grade", "g.eval.yaml", "--responses", "answers.jsonl", "-o", "out", cwd=tmp_path, timeout=120
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "NOT RUN two  no recorded answer" in proc.stdout
    statuses = {r["test_id"]: r["execution_status"] for r in _rows(tmp_path / "out")}
    assert statuses == {"one": "ok", "two": "not_run"}
    report = run_cli("report", "out", cwd=tmp_path, timeout=120)
    assert report.returncode == 3 and "PASSED" not in report.stdout, report.stdout + report.stderr
    # Both answered: a pass, as before.
    (tmp_path / "answers.jsonl").write_text(
        '{"test_id": "one", "output": "yes"}\n{"test_id": "two", "output": "yes"}\n'
    )
    full = run_cli(
        "grade", "g.eval.yaml", "--responses", "answers.jsonl", "-o", "full", cwd=tmp_path, timeout=120
    )
    assert full.returncode == 0, full.stdout + full.stderr


def test_grade_refuses_an_impossible_token_count_where_it_was_recorded(tmp_path: Path) -> None:
    (tmp_path / "g.eval.yaml").write_text(GRADE_EVAL)
    (tmp_path / "answers.jsonl").write_text(
        '{"test_id": "one", "output": "yes", "token_usage": {"input": 3, "output": 1}}\n'
        f'{{"test_id": "two", "output": "yes", "token_usage": {{"input": {BIG}, "output": 1}}}}\n'
    )
    proc = run_cli(
        "grade", "g.eval.yaml", "--responses", "answers.jsonl", "-o", "out", cwd=tmp_path, timeout=120
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert (
        "answers.jsonl:2:1: error: invalid response: token_usage.input 100000... (400 digits)" in proc.stderr
    )
    assert not (tmp_path / "out" / "index.jsonl").exists()  # no row `report` would refuse
    # With plausible counts the rows grade writes are rows report reads.
    (tmp_path / "answers.jsonl").write_text(
        '{"test_id": "one", "output": "yes", "token_usage": {"input": 3, "output": 1}, "cost_usd": 0.5}\n'
        '{"test_id": "two", "output": "yes",'
        ' "token_usage": {"prompt_tokens": 9007199254740991, "output": 1}}\n'
    )
    graded = run_cli(
        "grade", "g.eval.yaml", "--responses", "answers.jsonl", "-o", "out", cwd=tmp_path, timeout=120
    )
    assert graded.returncode == 0, graded.stdout + graded.stderr
    report = run_cli("report", "out", cwd=tmp_path, timeout=120)
    assert report.returncode == 0, report.stdout + report.stderr


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("cost_usd", BIG, "cost_usd 100000... (400 digits) is not a finite number >= 0"),
        ("duration_ms", "-1", "duration_ms -1 is not a finite number >= 0"),
        ("cost_usd", '"free"', "cost_usd 'free' is not a number"),
        ("llm_call_count", BIG, "llm_call_count 100000... (400 digits) is outside"),
    ],
)
def test_grade_refuses_other_impossible_measures(
    tmp_path: Path, field: str, value: str, message: str
) -> None:
    (tmp_path / "g.eval.yaml").write_text(GRADE_EVAL)
    (tmp_path / "answers.jsonl").write_text(f'{{"test_id": "one", "output": "yes", "{field}": {value}}}\n')
    proc = run_cli(
        "grade", "g.eval.yaml", "--responses", "answers.jsonl", "-o", "out", cwd=tmp_path, timeout=120
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"answers.jsonl:1:1: error: invalid response: {message}" in proc.stderr


@pytest.mark.parametrize(
    "answer", ['"output": null', '"output": ""', '"text": "  "', '"token_usage": {"input": 3}']
)
def test_grade_a_recorded_answer_without_content_is_an_execution_error(tmp_path: Path, answer: str) -> None:
    (tmp_path / "n.eval.yaml").write_text(NEGATED_EVAL)
    (tmp_path / "answers.jsonl").write_text(f'{{"test_id": "polite", {answer}}}\n')
    proc = run_cli(
        "grade", "n.eval.yaml", "--responses", "answers.jsonl", "-o", "out", cwd=tmp_path, timeout=120
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr  # the negated grader never saw an empty answer
    assert (
        "ERROR polite" in proc.stdout
        and "the recorded answer has no content (answers.jsonl:1)" in proc.stdout
    )
    (row,) = _rows(tmp_path / "out")
    assert row["execution_status"] == "execution_error" and row["score"] == 0.0 and not row.get("scores")
    report = run_cli("report", "out", cwd=tmp_path, timeout=120)
    assert report.returncode == 3, report.stdout + report.stderr


def test_grade_a_recorded_answer_of_tool_calls_alone_is_graded(tmp_path: Path) -> None:
    (tmp_path / "t.eval.yaml").write_text(
        "tests:\n  - id: look\n    input: look it up\n    assertions:\n      - type: tool-trajectory\n"
        "        mode: in_order\n        expected:\n          - tool: search\n"
    )
    (tmp_path / "answers.jsonl").write_text(
        '{"test_id": "look", "output": null, "tool_calls": [{"tool": "search"}]}\n'
    )
    proc = run_cli(
        "grade", "t.eval.yaml", "--responses", "answers.jsonl", "-o", "out", cwd=tmp_path, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
