"""code-grader with real subprocess scripts written into tmp_path."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agentv_ci.model.result import GraderResult, TargetResponse, TokenUsage
from agentv_ci.model.suite import GraderSpec, Message, ToolCall
from agentv_ci.model.suite import Test as EvalTest
from tests.graders.contexts import make_ctx, run_spec

PY = sys.executable


def script(tmp_path: Path, body: str, name: str = "grader.py") -> list[str]:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return [PY, str(path)]


def run_code(
    tmp_path: Path,
    command: Any,
    output: str = "The answer is 42",
    *,
    response: TargetResponse | None = None,
    test: EvalTest | None = None,
    **config: Any,
) -> GraderResult:
    spec = GraderSpec(type="code-grader", name="check", config={"command": command, **config})
    ctx = make_ctx(output, response=response, test=test, eval_path=tmp_path / "EVAL.yaml")
    return run_spec(spec, ctx, base_dir=tmp_path)


ECHO_PAYLOAD = """
import json, sys
payload = json.load(sys.stdin)
open("payload.json", "w").write(json.dumps(payload))
print(json.dumps({"score": 1, "assertions": [{"text": "ok", "passed": True}]}))
"""


def test_stdin_payload_is_agentv_v4_snake_case(tmp_path: Path) -> None:
    test = EvalTest(
        id="t",
        input=[Message(role="user", content="Q?")],
        expected_output=[Message(role="assistant", content="42")],
        criteria="Answers 42",
        metadata={"k": "v"},
        input_files=["/abs/file.txt"],
    )
    response = TargetResponse(
        text="The answer is 42",
        messages=[
            Message(role="assistant", content="", tool_calls=[
                ToolCall(tool="Read", input={"path": "a"}, duration_ms=5.0),
                ToolCall(tool="Read", input={"path": "b"}, duration_ms=7.0),
                ToolCall(tool="Bash", input={"cmd": "ls"}, status="error"),
            ]),
            Message(role="assistant", content="The answer is 42"),
        ],
        token_usage=TokenUsage(input=100, output=20, cached=5),
        cost_usd=0.01,
        duration_ms=1234.0,
        file_changes="--- a\n+++ b\n",
    )  # fmt: skip
    result = run_code(tmp_path, script(tmp_path, ECHO_PAYLOAD), response=response, test=test, config={"x": 1},
                      threshold=0.5)  # fmt: skip
    assert result.error is None and result.score == 1.0
    payload = json.loads((tmp_path / "payload.json").read_text())
    assert payload["output"] == "The answer is 42"  # a string, not the message list
    assert payload["criteria"] == "Answers 42"
    assert payload["expected_output"] == [{"role": "assistant", "content": "42"}]
    assert payload["input"] == [{"role": "user", "content": "Q?"}]
    assert payload["messages"][0]["tool_calls"][0] == {
        "tool": "Read",
        "input": {"path": "a"},
        "duration_ms": 5.0,
    }
    assert payload["input_files"] == ["/abs/file.txt"] and payload["metadata"] == {"k": "v"}
    assert payload["trace_summary"] == {
        "event_count": 5,
        "tool_calls": {"Read": 2, "Bash": 1},
        "error_count": 1,
        "tool_durations": {"Read": [5.0, 7.0]},
        "llm_call_count": 2,
    }
    assert payload["token_usage"] == {"input": 100, "output": 20, "cached": 5}
    assert (payload["cost_usd"], payload["duration_ms"], payload["file_changes"]) == (
        0.01,
        1234.0,
        "--- a\n+++ b\n",
    )
    assert payload["config"] == {"x": 1, "threshold": 0.5}  # unknown keys merged; explicit config wins
    assert payload["question"] == "Q?" and payload["reference_answer"] == "42"  # legacy aliases


def test_unknown_keys_merge_into_config_and_explicit_config_wins(tmp_path: Path) -> None:
    run_code(tmp_path, script(tmp_path, ECHO_PAYLOAD), limit=3, mode="strict", config={"mode": "lenient"})
    assert json.loads((tmp_path / "payload.json").read_text())["config"] == {"limit": 3, "mode": "lenient"}


def test_huge_output_goes_to_output_path(tmp_path: Path) -> None:
    body = """
import json, sys
p = json.load(sys.stdin)
text = json.load(open(p["output_path"]))
print(json.dumps({"score": 1 if p["output"] is None and len(text) == 60000 else 0}))
"""
    result = run_code(tmp_path, script(tmp_path, body), output="z" * 60_000)
    assert result.score == 1.0


@pytest.mark.parametrize(
    ("stdout_json", "score", "passed"),
    [
        ({"score": 0.7, "assertions": [{"text": "a", "passed": True}, {"text": "b", "passed": False}]}, 0.7,
         [True, False]),
        ({"assertions": [{"text": "a", "passed": True}, {"text": "b", "passed": False}, {"bad": 1}]}, 0.5,
         [True, False]),  # no score -> passed/total; entries without text dropped
        ({"score": 3}, 1.0, []),  # clamped
        ({"score": 0.4, "hits": ["found x"], "misses": ["no y"], "reasoning": "half"}, 0.4, [True, False]),
        ({"pass": True, "reason": "fine"}, 1.0, []),
        ({"pass": False}, 0.0, []),
        ({"checks": [{"id": "a", "text": "A", "pass": True}, {"text": "B", "pass": False, "score": 0.5}]},
         0.75, [True, False]),
        ({"unrelated": 1}, 0.0, [False]),  # AgentV v4: neither score nor assertions -> 0
    ],
)  # fmt: skip
def test_json_answers_old_and_new(
    tmp_path: Path, stdout_json: dict, score: float, passed: list[bool]
) -> None:
    body = f"import json; print(json.dumps({stdout_json!r}))"
    result = run_code(tmp_path, [PY, "-c", body])
    assert result.error is None
    assert result.score == pytest.approx(score)
    assert [a.passed for a in result.assertions] == passed


@pytest.mark.parametrize(
    ("command", "score", "text"),
    [
        ("echo 'looks right'", 1.0, "looks right"),
        ("echo 'wrong answer'; exit 1", 0.0, "wrong answer"),
        ("exit 3", 0.0, "exit 3"),
        ("exit 0", 1.0, "exit 0"),
        ("echo 0.9", 1.0, "0.9"),  # a bare JSON scalar is plain text: exit code decides
        ("echo '[1, 2]'", 1.0, "[1, 2]"),
    ],
)
def test_exit_code_convention_for_plain_text(tmp_path: Path, command: str, score: float, text: str) -> None:
    result = run_code(tmp_path, command)
    assert result.error is None
    assert result.score == score and result.assertions[0].text == text


def test_string_command_runs_in_the_eval_directory_and_cwd_is_relative(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "marker.txt").write_text("here")
    assert run_code(tmp_path, "cat sub/marker.txt").assertions[0].text == "here"
    assert run_code(tmp_path, "cat marker.txt", cwd="sub").assertions[0].text == "here"


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("echo '{\"score\": 1}'; exit 2", "exited with code 2"),  # JSON + non-zero exit -> error
        ("echo boom >&2; exit 1", "boom"),  # stderr + non-zero exit -> error
        (["/definitely/not/a/binary"], "could not start"),
        ([PY, "-c", "import json; print(json.dumps({'score': 'high'}))"], "`score` must be a number"),
        ([PY, "-c", "raise SystemExit(__import__('json').loads('{'))"], "exited with code 1"),  # a crash
    ],
)
def test_grader_failures_are_errors_not_scores(tmp_path: Path, command: Any, message: str) -> None:
    result = run_code(tmp_path, command)
    assert result.error is not None and message in result.error
    assert result.score == 0.0 and result.verdict == "fail"


@pytest.mark.parametrize(
    ("command", "text"),
    [
        ("echo '{\"score\": 1}'; exit 2", "Code evaluator failed: Code evaluator exited with code 2"),
        ("echo boom >&2; exit 3", "Code evaluator failed: Code evaluator exited with code 3: boom"),
    ],
)
def test_grader_error_assertion_uses_agentv_wording(tmp_path: Path, command: str, text: str) -> None:
    result = run_code(tmp_path, command)
    assert result.error is not None and [a.text for a in result.assertions] == [text]


def test_garbage_on_stdout_with_exit_0_counts_as_a_pass_by_exit_code(tmp_path: Path) -> None:
    result = run_code(tmp_path, [PY, "-c", "import sys; sys.stdout.buffer.write(bytes(range(256)))"])
    assert result.error is None and result.score == 1.0


def test_a_hanging_grader_and_its_children_are_killed_at_the_timeout(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    command = f"sleep 60 & echo $! > {pidfile}; wait"
    started = time.monotonic()
    result = run_code(tmp_path, command, timeout_seconds=0.5)
    elapsed = time.monotonic() - started
    assert result.error is not None and "timed out after 0.5s" in result.error
    assert elapsed < 10
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and is_running(child):
        time.sleep(0.05)
    assert not is_running(child), "the grader's child process survived the timeout"


def is_running(pid: int) -> bool:
    """Alive and not a zombie (a killed orphan may wait a while for init to reap it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def test_a_grader_writing_100_mb_is_stopped_with_a_clear_error(tmp_path: Path) -> None:
    body = (
        "import sys\nchunk = b'x' * (1024 * 1024)\nfor _ in range(100):\n    sys.stdout.buffer.write(chunk)\n"
    )
    result = run_code(tmp_path, script(tmp_path, body), timeout_seconds=30)
    assert result.error is not None and "more than 1024 KiB to stdout" in result.error


def test_a_grader_flooding_stderr_still_finishes(tmp_path: Path) -> None:
    body = "import sys\nsys.stderr.buffer.write(b'e' * (20 * 1024 * 1024))\nprint('{\"score\": 1}')\n"
    result = run_code(tmp_path, script(tmp_path, body), timeout_seconds=30)
    assert result.error is None and result.score == 1.0
    assert result.details is not None and len(result.details["stderr"]) <= 2000


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"command": []}, "`command` must be a non-empty list"),
        ({"command": ""}, "`command` must be a non-empty list"),
        ({"command": "true", "timeout_seconds": -1}, "> 0.0 - at `$.timeout_seconds`"),
        ({"command": "true", "target": "yes"}, "must be true or a mapping with `max_calls`"),
        ({"command": "true", "target": {"max_calls": -1}}, "non-negative integer"),
    ],
)
def test_bad_code_grader_config(tmp_path: Path, config: dict, message: str) -> None:
    spec = GraderSpec(type="code-grader", name="c", config=config)
    result = run_spec(spec, make_ctx("x", eval_path=tmp_path / "EVAL.yaml"), base_dir=tmp_path)
    assert result.error is not None and message in result.error


def test_deprecated_script_key_still_runs(tmp_path: Path) -> None:
    spec = GraderSpec(type="code-grader", name="c", config={"script": ["sh", "-c", "echo ok"]})
    result = run_spec(spec, make_ctx("x", eval_path=tmp_path / "EVAL.yaml"), base_dir=tmp_path)
    assert result.score == 1.0 and result.assertions[0].text == "ok"


def test_unicode_answer_round_trips_through_the_script(tmp_path: Path) -> None:
    body = (
        "import json, sys\n"
        "p = json.loads(sys.stdin.buffer.read().decode('utf-8'))\n"
        "ok = p['output'] == 'café ☕ 日本'\n"
        "sys.stdout.buffer.write(json.dumps({'score': 1 if ok else 0, "
        "'assertions': [{'text': 'naïve ✓', 'passed': ok}]}, ensure_ascii=False).encode('utf-8'))\n"
    )
    result = run_code(tmp_path, script(tmp_path, body), output="café ☕ 日本")
    assert result.score == 1.0 and result.assertions[0].text == "naïve ✓"
