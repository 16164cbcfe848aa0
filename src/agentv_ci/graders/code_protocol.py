"""AgentV's code-grader wire protocol: the stdin payload (v4.42.4, snake_case) and the stdout
formats scripts answer with (v4 `score`/`assertions`, older `hits`/`misses`/`reasoning`, newer
`pass`/`checks`, and plain text judged by the exit code)."""

from __future__ import annotations

import json
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec

from agentv_ci.graders.code_process import ScriptRun, run_script
from agentv_ci.graders.judge_replies import as_bool
from agentv_ci.graders.outcome import answer_text, clamp_score, excerpt
from agentv_ci.json_limits import MAX_JSON_DEPTH, too_deep
from agentv_ci.model.result import AssertionResult, DependencyResult, TargetResponse
from agentv_ci.model.suite import Message, Test
from agentv_ci.prompting import reference_answer, render_input
from agentv_ci.scoring import js_sum

INLINE_OUTPUT_LIMIT = 50_000  # larger answers go to a temp file named by `output_path`


class ProtocolError(ValueError):
    """The script's answer can't be read as a grade."""


def _messages(messages: list[Message]) -> list[Any]:
    return msgspec.to_builtins(messages)  # type: ignore[no-any-return]


def trace_summary(response: TargetResponse) -> dict[str, Any]:
    """`{event_count, tool_calls: {name: count}, error_count, tool_durations: {name: [ms]},
    llm_call_count}`."""
    counts: Counter[str] = Counter()
    durations: dict[str, list[float]] = defaultdict(list)
    errors = 0
    for message in response.messages:
        for call in message.tool_calls or []:
            counts[call.tool] += 1
            if call.duration_ms is not None:
                durations[call.tool].append(call.duration_ms)
            if call.status in ("error", "failed"):
                errors += 1
    llm_calls = response.llm_call_count
    if llm_calls is None:
        llm_calls = sum(1 for m in response.messages if m.role == "assistant")
    return {
        "event_count": sum(counts.values()) + llm_calls,
        "tool_calls": dict(counts),
        "error_count": errors,
        "tool_durations": dict(durations),
        "llm_call_count": llm_calls,
    }


def build_payload(
    test: Test,
    response: TargetResponse,
    *,
    config: dict[str, Any],
    workspace_path: Path | None,
    spill_dir: Path,
    dependencies: Mapping[str, DependencyResult] | None = None,
) -> dict[str, Any]:
    """The stdin document. Legacy aliases (`question`, `candidate_answer`, `reference_answer`, ...) ride
    along so graders written for older AgentV versions keep working. A test with `depends_on` adds
    `dependency_results` (AgentV's `dependencyResults`, snake_case; AgentV 4.42.4 keeps them in its
    in-process grader context only)."""
    output = answer_text(response)
    usage = None
    if response.token_usage is not None:
        usage = {"input": response.token_usage.input, "output": response.token_usage.output}
        if response.token_usage.cached is not None:
            usage["cached"] = response.token_usage.cached
    payload: dict[str, Any] = {
        "criteria": test.criteria or "",
        "expected_output": _messages(test.expected_output),
        "output": output,
        "messages": _messages(response.messages),
        "input_files": list(test.input_files),
        "input": _messages(test.input),
        "metadata": test.metadata,
        "trace": None,
        "trace_summary": trace_summary(response),
        "token_usage": usage,
        "cost_usd": response.cost_usd,
        "duration_ms": response.duration_ms,
        "start_time": response.start_time,
        "end_time": response.end_time,
        "file_changes": response.file_changes,
        "workspace_path": str(workspace_path) if workspace_path else None,
        "config": config,
        # older dialects
        "question": render_input(test.input, inline_files=False),
        "candidate_answer": output,
        "reference_answer": reference_answer(test.expected_output),
        "expected_outcome": test.criteria or "",
    }
    if dependencies:
        payload["dependency_results"] = {key: msgspec.to_builtins(row) for key, row in dependencies.items()}
    if len(json.dumps(output, ensure_ascii=False)) > INLINE_OUTPUT_LIMIT:
        path = spill_dir / "output.json"
        path.write_text(json.dumps(output, ensure_ascii=False), encoding="utf-8")
        payload["output"] = None
        payload["candidate_answer"] = None
        payload["output_path"] = str(path)
    return payload


async def run_with_payload(
    argv: list[str],
    test: Test,
    response: TargetResponse,
    *,
    config: dict[str, Any],
    workspace_path: Path | None,
    cwd: Path,
    timeout_s: float,
    spill_prefix: str,
    indent: int | None = None,
    env: dict[str, str] | None = None,
    dependencies: Mapping[str, DependencyResult] | None = None,
) -> ScriptRun:
    """Run a script with the stdin payload for `test`/`response`; large answers are spilled to a
    temporary directory that lives until the script has finished. Raises `ScriptFailure`."""
    with script_stdin(
        test,
        response,
        config=config,
        workspace_path=workspace_path,
        dependencies=dependencies,
        spill_prefix=spill_prefix,
        indent=indent,
    ) as (_, stdin):
        return await run_script(argv, stdin=stdin, cwd=cwd, timeout_s=timeout_s, env=env)


@contextmanager
def script_stdin(
    test: Test,
    response: TargetResponse,
    *,
    config: dict[str, Any],
    workspace_path: Path | None,
    dependencies: Mapping[str, DependencyResult] | None,
    spill_prefix: str,
    indent: int | None,
) -> Iterator[tuple[dict[str, Any], bytes]]:
    """The payload for `test`/`response` and its JSON bytes for a script's stdin; a large answer is
    spilled to a temporary directory (its path in the payload's `output_path`) that lives as long
    as the context."""
    with tempfile.TemporaryDirectory(prefix=spill_prefix) as spill:
        payload = build_payload(
            test,
            response,
            config=config,
            workspace_path=workspace_path,
            spill_dir=Path(spill),
            dependencies=dependencies,
        )
        yield payload, json.dumps(payload, indent=indent, ensure_ascii=False, default=str).encode()


def _list(value: Any) -> list[Any]:
    """`value` when the script answered a list there; anything else (`"hits": 1`) counts as none."""
    return value if isinstance(value, list) else []


def _assertions(data: dict[str, Any]) -> list[AssertionResult]:
    found: list[AssertionResult] = []
    for item in _list(data.get("assertions")):
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            passed = as_bool(item.get("passed"))
            evidence = item.get("evidence")
            found.append(AssertionResult(item["text"], bool(passed), str(evidence) if evidence else None))
    for key, passed_flag in (("hits", True), ("misses", False)):
        for entry in _list(data.get(key)):
            if isinstance(entry, str):
                found.append(AssertionResult(entry, passed_flag))
    return found


def _checks(data: dict[str, Any]) -> tuple[list[AssertionResult], list[float]]:
    assertions: list[AssertionResult] = []
    scores: list[float] = []
    for item in _list(data.get("checks")):
        if not isinstance(item, dict):
            continue
        passed = as_bool(item.get("pass", item.get("passed")))
        score = item.get("score")
        value = clamp_score(score) if isinstance(score, int | float) else (1.0 if passed else 0.0)
        scores.append(value)
        text = item.get("text") or item.get("id") or "check"
        evidence = item.get("evidence") or item.get("reason")
        assertions.append(
            AssertionResult(
                str(text),
                bool(passed) if passed is not None else value >= 0.8,
                str(evidence) if evidence else None,
            )
        )
    return assertions, scores


def parse_json_answer(
    data: dict[str, Any],
) -> tuple[float, list[AssertionResult], dict[str, Any], str | None]:
    """(score, assertions, details, verdict?) from a JSON object answer.

    Score: `score` if given; else the mean of `checks`; else `pass` (1/0); else passed/total of
    `assertions`; else 0 (AgentV v4)."""
    assertions = _assertions(data)
    check_assertions, check_scores = _checks(data)
    assertions.extend(check_assertions)
    if "score" in data and data["score"] is not None:
        if isinstance(data["score"], bool) or not isinstance(data["score"], int | float | str):
            raise ProtocolError(f"`score` must be a number, got {data['score']!r}")
        try:
            score = clamp_score(float(data["score"]))
        except ValueError:
            raise ProtocolError(f"`score` must be a number, got {data['score']!r}") from None
    elif check_scores:
        score = js_sum(check_scores) / len(check_scores)
    elif as_bool(data.get("pass")) is not None:
        score = 1.0 if as_bool(data.get("pass")) else 0.0
    elif assertions:
        score = sum(1 for a in assertions if a.passed) / len(assertions)
    else:
        score = 0.0
        assertions.append(AssertionResult("code-grader answered JSON without a score or assertions", False))
    details: dict[str, Any] = dict(data["details"]) if isinstance(data.get("details"), dict) else {}
    for key in ("reasoning", "reason"):
        if isinstance(data.get(key), str):
            details[key] = data[key]
    verdict = data.get("verdict") if data.get("verdict") in ("pass", "fail") else None
    return score, assertions, details, verdict


def interpret(
    exit_code: int, stdout: str, stderr: str
) -> tuple[float, list[AssertionResult], dict[str, Any], str | None]:
    """A finished script's grade. Raises ProtocolError for AgentV's error cases: a non-zero exit
    with JSON-looking stdout or anything on stderr."""
    text = stdout.strip()
    if exit_code != 0 and (text.startswith(("{", "[")) or stderr.strip()):
        detail = f": {excerpt(stderr.strip(), 500)}" if stderr.strip() else ""
        raise ProtocolError(f"Code evaluator exited with code {exit_code}{detail}")  # AgentV's wording
    if text.count("{") + text.count("[") > MAX_JSON_DEPTH and too_deep(text.encode()) is not None:
        raise ProtocolError(f"the answer is nested more than {MAX_JSON_DEPTH} levels deep")
    try:
        data = json.loads(text) if text else None
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, dict):
        return parse_json_answer(data)
    passed = exit_code == 0
    message = text if text else f"exit {exit_code}"
    return (
        (1.0 if passed else 0.0),
        [AssertionResult(excerpt(message, 500), passed)],
        {"exit_code": exit_code},
        None,
    )
