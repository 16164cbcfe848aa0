"""`agentv-ci grade`: recorded answers graded offline (in-process CLI, a real subprocess, a real judge)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentv_ci.cli import app
from agentv_ci.errors import LoadError
from agentv_ci.graders.responses_file import read_responses
from tests.fakes.llm_server import FakeLlmServer

EVAL = """\
name: capitals
tests:
  - id: france
    input: What is the capital of France?
    assertions:
      - type: contains
        value: Paris
  - id: japan
    input: Capital of Japan?
    execution:
      threshold: 0.5
    assertions:
      - type: equals
        value: Tokyo
  - id: agent
    input: Look up the refund policy
    assertions:
      - type: tool-trajectory
        mode: in_order
        expected:
          - tool: search
          - tool: read
      - type: execution-metrics
        max_tool_calls: 3
        max_cost_usd: 0.05
  - id: judged
    criteria: Greets the user by name
    input: Hi, I'm Ada
"""


def only(*test_ids: str) -> str:
    """EVAL with just these tests (a recording that answers all of them is complete)."""
    head, *blocks = EVAL.split("  - id: ")
    return head + "".join(f"  - id: {b}" for b in blocks if b.split("\n", 1)[0] in test_ids)


def write(tmp_path: Path, *rows: object, eval_text: str = EVAL) -> tuple[Path, Path]:
    eval_path = tmp_path / "EVAL.yaml"
    eval_path.write_text(eval_text, encoding="utf-8")
    responses = tmp_path / "responses.jsonl"
    responses.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return eval_path, responses


def grade_cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["grade", *args])
    if isinstance(result.exception, SystemExit):
        return int(result.exception.code or 0), result.output
    if result.exception is not None:
        raise result.exception
    return result.exit_code, result.output


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in (path / "index.jsonl").read_text().splitlines()]


def test_grades_recorded_answers_and_writes_index(tmp_path: Path) -> None:
    eval_path, responses = write(
        tmp_path,
        {"test_id": "france", "output": "It is Paris.", "cost_usd": 0.001, "duration_ms": 12},
        {
            "test_id": "agent",
            "text": "Refunds within 30 days.",
            "cost_usd": 0.01,
            "tool_calls": [
                {"tool": "search", "input": {"q": "refund"}},
                {"name": "read", "arguments": {"p": 1}},
            ],
        },
    )
    code, output = grade_cli(str(eval_path), "--responses", str(responses), "-o", str(tmp_path / "out"))
    # Two of the four tests have no recorded answer: not a pass (exit 3), and they are listed.
    assert code == 3, output
    assert "PASS  france  score=1.00" in output and "PASS  agent  score=1.00" in output
    assert "NOT RUN japan  no recorded answer" in output and "NOT RUN judged  no recorded answer" in output
    assert "2 graded: 2 passed, 0 failed, 0 errors; 2 test(s) without a recorded answer (not run)" in output
    written = rows(tmp_path / "out")
    assert [r["test_id"] for r in written] == ["france", "agent", "japan", "judged"]
    assert [r["execution_status"] for r in written[2:]] == ["not_run", "not_run"]
    assert written[2]["error"] == "no recorded answer" and written[2]["threshold"] == 0.5
    assert written[0]["cost_usd"] == 0.001 and written[0]["output"] == "It is Paris."
    assert written[0]["suite"] == "capitals" and written[0]["line"] == 3


def test_a_failing_answer_exits_1_and_honours_the_test_threshold(tmp_path: Path) -> None:
    eval_path, responses = write(
        tmp_path, {"test_id": "france", "output": "Lyon"}, {"test_id": "japan", "output": "Kyoto"}
    )
    code, output = grade_cli(str(eval_path), "--responses", str(responses), "-o", str(tmp_path / "out"))
    assert code == 1
    assert "FAIL  france  score=0.00 threshold=0.8" in output and "threshold=0.5" in output
    assert 'Output does not contain "Paris"' in output
    code, output = grade_cli(
        str(eval_path), "--responses", str(responses), "-o", str(tmp_path / "o2"), "--threshold", "0"
    )
    assert code == 3 and "PASS  france" in output  # the CLI threshold wins over the test's...
    assert "NOT RUN agent" in output  # ...and two tests had no answer: inconclusive, not a pass


def test_only_errors_exits_3(tmp_path: Path) -> None:
    eval_path, responses = write(tmp_path, {"test_id": "judged", "output": "Hello Ada"})
    code, output = grade_cli(str(eval_path), "--responses", str(responses), "-o", str(tmp_path / "out"))
    assert code == 3
    assert "ERROR judged" in output and "no grader target configured" in output
    assert rows(tmp_path / "out")[0]["execution_status"] == "execution_error"


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"test_id": "france", "output": "x"}', "{not json"], "responses.jsonl:2:2: error: invalid JSON"),
        (['{"output": "x"}'], "responses.jsonl:1:1: error: each line needs a `test_id`"),
        (["[1, 2]"], "responses.jsonl:1:1: error: each line must be a JSON object"),
        (['{"test_id": "nope", "output": "x"}'], "unknown test id 'nope'"),
        (['{"test_id": "france", "tool_calls": [{"input": {}}]}'], "needs a `tool`"),
        (
            ['{"test_id": "france", "token_usage": {"input": "many"}}'],
            "responses.jsonl:1:1: error: invalid response",
        ),
    ],
)
def test_bad_responses_are_reported_at_file_line(tmp_path: Path, lines: list[str], message: str) -> None:
    eval_path, responses = write(tmp_path, *lines)
    with pytest.raises(LoadError) as caught:
        if "unknown" in message:
            grade_cli(str(eval_path), "--responses", str(responses))
        else:
            read_responses(responses)
    assert message in caught.value.render()


def test_real_process_exit_codes(tmp_path: Path) -> None:
    eval_path, responses = write(tmp_path, {"test_id": "france", "output": "Paris"}, eval_text=only("france"))
    command = [
        sys.executable,
        "-m",
        "agentv_ci",
        "grade",
        str(eval_path),
        "--responses",
        str(responses),
        "-o",
        str(tmp_path / "out"),
    ]
    ok = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    responses.write_text('{"test_id": "france", "output": "Paris"}\n{oops\n')
    bad = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2
    assert "responses.jsonl:2:2: error: invalid JSON" in bad.stderr and "Traceback" not in bad.stderr
    responses.write_text('{"test_id": "france", "output": "Lyon"}\n')
    assert subprocess.run(command, capture_output=True, text=True, timeout=60).returncode == 1


def test_llm_grader_through_a_grader_target(tmp_path: Path, llm_server: FakeLlmServer) -> None:
    llm_server.responder = lambda call: (
        '{"score": 0.9, "assertions": [{"text": "greets Ada", "passed": true}]}'
    )
    eval_path, responses = write(
        tmp_path, {"test_id": "judged", "output": "Hello Ada!"}, eval_text=only("judged")
    )
    (tmp_path / "targets.yaml").write_text(
        "targets:\n  - name: judge\n    provider: openai\n    model: judge-model\n    api_key: test\n"
        f"    base_url: {llm_server.base_url}\n    max_retries: 0\n"
    )
    code, output = grade_cli(
        str(eval_path),
        "--responses",
        str(responses),
        "-o",
        str(tmp_path / "out"),
        "--grader-target",
        "judge",
        "--targets",
        str(tmp_path / "targets.yaml"),
    )
    assert code == 0, output
    assert "PASS  judged  score=0.90" in output
    prompt = llm_server.calls[0].body["messages"][-1]["content"]
    assert "Greets the user by name" in prompt and "Hello Ada!" in prompt


def test_three_way_labels(tmp_path: Path) -> None:
    eval_path, responses = write(tmp_path, {"test_id": "japan", "output": "Tokyo"}, eval_text=only("japan"))
    code, output = grade_cli(
        str(eval_path), "--responses", str(responses), "-o", str(tmp_path / "o"), "--three-way"
    )
    assert code == 0 and "[pass]" in output


METRICS_EVAL = """\
tests:
  - id: run
    input: Look it up
    assertions:
      - type: tool-trajectory
        mode: in_order
        expected:
          - tool: search
      - type: token-usage
        max_total: 100
      - type: execution-metrics
        max_input_tokens: 60
      - type: latency
        threshold: 1000
"""


@pytest.mark.parametrize(
    "usage",
    [
        {"input": 40, "output": 30},
        {"input_tokens": 40, "output_tokens": 30},
        {"prompt_tokens": 40, "completion_tokens": 30},
        {"inputTokens": 40, "outputTokens": 30},
    ],
)
def test_messages_token_usage_and_duration_reach_the_graders(tmp_path: Path, usage: dict) -> None:
    eval_path, responses = write(
        tmp_path,
        {
            "test_id": "run",
            "messages": [
                {"role": "assistant", "content": "", "tool_calls": [{"tool": "search", "input": {}}]},
                {"role": "assistant", "content": "Found it."},
            ],
            "token_usage": usage,
            "duration_ms": 400,
        },
        eval_text=METRICS_EVAL,
    )
    code, output = grade_cli(str(eval_path), "--responses", str(responses), "-o", str(tmp_path / "out"))
    assert code == 0, output
    row = rows(tmp_path / "out")[0]
    assert row["output"] == "Found it."
    texts = [a["text"] for g in row["scores"] for a in g["assertions"]]
    assert "Total tokens 70 <= 100" in texts and "Input tokens 40 <= 60 max" in texts
    assert "Duration 400ms <= 1000ms threshold" in texts


def test_token_usage_without_known_counts_is_missing_data_not_zero(tmp_path: Path) -> None:
    eval_path, responses = write(
        tmp_path, {"test_id": "run", "output": "x", "token_usage": {"total": 5000}}, eval_text=METRICS_EVAL
    )
    code, output = grade_cli(str(eval_path), "--responses", str(responses), "-o", str(tmp_path / "out"))
    assert code == 1 and "FAIL  run" in output
    usage = next(g for g in rows(tmp_path / "out")[0]["scores"] if g["type"] == "token-usage")
    assert usage["score"] == 0.0 and usage["assertions"][0]["passed"] is False


def test_legacy_grader_names_are_graded_with_a_deprecation_warning(tmp_path: Path) -> None:
    legacy = """\
evalcases:
  - id: old
    input: hi
    execution:
      evaluators:
        - name: judge
          type: code_judge
          script: [python3, -c, "print('{\\"score\\": 1}')"]
"""
    eval_path, responses = write(tmp_path, {"test_id": "old", "output": "hello"}, eval_text=legacy)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentv_ci",
            "grade",
            str(eval_path),
            "--responses",
            str(responses),
            "-o",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "PASS  old  score=1.00" in proc.stdout
    assert "EVAL.yaml:7:17: warning[W102]: grader type `code_judge` is deprecated; use `code-grader`" in (
        proc.stderr
    )
    assert rows(tmp_path / "out")[0]["scores"][0]["type"] == "code-grader"


TRAJECTORY_EVAL = """\
tests:
  - id: run
    input: Look it up
    assertions:
      - type: tool-trajectory
        mode: exact
        expected:
          - tool: search
            args: {q: refunds}
          - tool: read
"""


@pytest.mark.parametrize(
    "line",
    [
        {  # OpenAI chat format inside `messages`: function.arguments is a JSON string
            "messages": [
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "1",
                            "type": "function",
                            "function": {"name": "search", "arguments": '{"q": "refunds"}'},
                        },
                        {"id": "2", "type": "function", "function": {"name": "read", "arguments": "{}"}},
                    ],
                },
                {"role": "tool", "content": "30 days", "tool_call_id": "1"},
                {"role": "assistant", "content": "Refunds within 30 days."},
            ]
        },
        {  # flattened `name` + `arguments` string at the top level
            "output": "Refunds within 30 days.",
            "tool_calls": [
                {"name": "search", "arguments": '{"q": "refunds"}'},
                {"name": "read", "arguments": "{}"},
            ],
        },
    ],
)
def test_tool_calls_in_openai_shapes_are_read_with_their_arguments(tmp_path: Path, line: dict) -> None:
    eval_path, responses = write(tmp_path, {"test_id": "run", **line}, eval_text=TRAJECTORY_EVAL)
    code, output = grade_cli(str(eval_path), "--responses", str(responses), "-o", str(tmp_path / "out"))
    assert code == 0, output
    row = rows(tmp_path / "out")[0]
    assert row["output"] == "Refunds within 30 days."
    assert row["scores"][0]["score"] == 1.0


def test_grade_into_an_old_run_directory_is_judged_against_its_own_plan_only(tmp_path: Path) -> None:
    """`grade -o DIR` into the directory of an earlier run (its plan.jsonl, summary.json and rows)
    replaces them: `report DIR` reads the grade's rows against the grade's plan, never the old run's."""
    from tests.cli_helpers import mock_project, run_cli

    old_eval = "name: other\ntests:\n" + "".join(
        f"  - id: old-{n}\n    input: q\n    assertions:\n      - type: contains\n        value: yes\n"
        for n in range(3)
    )
    evals = mock_project(tmp_path / "old", response="no", eval_file="other.eval.yaml", eval_yaml=old_eval)
    out = tmp_path / "out"
    earlier = run_cli("run", str(evals / "other.eval.yaml"), "-o", str(out), "-q", cwd=tmp_path)
    assert earlier.returncode == 1, earlier.stdout + earlier.stderr  # a failing run, with a plan
    assert (out / "plan.jsonl").is_file() and (out / "summary.json").is_file()
    eval_path, responses = write(
        tmp_path,
        {"test_id": "france", "output": "Paris"},
        {"test_id": "japan", "output": "Tokyo"},
        eval_text=only("france", "japan"),
    )

    code, output = grade_cli(str(eval_path), "--responses", str(responses), "-o", str(out))

    assert code == 0, output
    assert [(r["suite"], r["test_id"]) for r in rows(out)] == [("capitals", "france"), ("capitals", "japan")]
    assert not (out / "summary.json").exists()  # the old run's facts are not the grade's
    report = run_cli("report", str(out), cwd=tmp_path)
    assert report.returncode == 0, report.stdout + report.stderr
    assert "PASSED: 2/2 tests passed" in report.stdout
    assert "plan unknown" not in report.stdout + report.stderr  # the grade recorded its own plan
    # ...and that plan counts: a grade killed after its plan and before its rows reads as incomplete.
    (out / "index.jsonl").write_text(json.dumps(rows(out)[0]) + "\n")
    cut = run_cli("report", str(out), cwd=tmp_path)
    assert cut.returncode == 3, cut.stdout + cut.stderr
    assert "incomplete: 1 of 2 tests did not run" in cut.stdout
