"""Grading recorded answers offline (`agentv-ci grade`): read a responses JSONL file, grade each line
against its test, write `index.jsonl`. No target is called; llm-graders use a grader target when one is
configured (`--grader-target`, or the eval target's `grader_target` in targets.yaml)."""

from __future__ import annotations

import asyncio
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from agentv_ci.errors import LoadError
from agentv_ci.model.result import TargetResponse, TestResult, TokenUsage
from agentv_ci.model.score_range import count_problem, shown_number
from agentv_ci.model.source import SourceLocation
from agentv_ci.model.suite import Message, Suite, Test, ToolCall
from agentv_ci.plugins import GraderTargetCaller
from agentv_ci.prompting import final_answer


class RecordedResponse(msgspec.Struct):
    """One line of a `--responses` file: a recorded answer to one test."""

    test_id: str
    response: TargetResponse
    line: int
    target: str | None = None


def _tool_call(raw: Any, where: SourceLocation) -> ToolCall:
    if not isinstance(raw, dict):
        raise LoadError("a tool call must be an object", location=where)
    name = raw.get("tool", raw.get("name"))
    function = raw.get("function")
    if name is None and isinstance(function, dict):
        name, arguments = function.get("name"), function.get("arguments")
        raw = {**raw, "input": json.loads(arguments) if isinstance(arguments, str) else arguments}
    if not isinstance(name, str):
        raise LoadError("a tool call needs a `tool` (or `name`)", location=where)
    fields = {
        k: raw[k] for k in ("id", "status", "start_time", "end_time", "duration_ms", "output") if k in raw
    }
    arguments = raw.get("input", raw.get("args", raw.get("arguments")))
    if isinstance(arguments, str) and arguments.lstrip().startswith("{"):  # OpenAI's JSON-string arguments
        arguments = json.loads(arguments)
    return msgspec.convert({"tool": name, "input": arguments, **fields}, ToolCall)


def _messages(raw: Any, where: SourceLocation) -> list[Message]:
    """Chat messages; their tool calls in any shape `_tool_call` reads (AgentV's or OpenAI's)."""
    if not isinstance(raw, list):
        return msgspec.convert(raw, list[Message])
    messages = []
    for item in raw:
        if isinstance(item, dict) and isinstance(item.get("tool_calls"), list):
            item = {**item, "tool_calls": [_tool_call(c, where) for c in item["tool_calls"]]}
        messages.append(msgspec.convert(item, Message))
    return messages


_USAGE_KEYS = {
    "input": ("input", "input_tokens", "inputTokens", "prompt_tokens"),
    "output": ("output", "output_tokens", "outputTokens", "completion_tokens"),
    "cached": ("cached", "cache_read_input_tokens", "cachedTokens"),
    "reasoning": ("reasoning", "reasoning_tokens", "reasoningTokens"),
}


def _token_usage(raw: Any, where: SourceLocation) -> TokenUsage | None:
    """AgentV's `{input, output, cached, reasoning}` or a provider's spelling (`input_tokens`,
    `prompt_tokens`...). Without an input or output count it is missing data (metric graders fail),
    never a silent zero."""
    if not isinstance(raw, dict):
        return None
    counts = {
        field: next((raw[k] for k in keys if raw.get(k) is not None), None)
        for field, keys in _USAGE_KEYS.items()
    }
    if counts["input"] is None and counts["output"] is None:
        return None
    for name, value in counts.items():
        problem = None if value is None else count_problem(value, f"token_usage.{name}")
        if problem is not None:  # a row `report` would refuse: refused here, where it was written
            raise LoadError(f"invalid response: {problem}", location=where)
    try:
        return msgspec.convert({k: v for k, v in counts.items() if v is not None}, TokenUsage)
    except msgspec.ValidationError as exc:
        raise LoadError(f"invalid response: token_usage: {exc}", location=where) from None


def _measure(data: dict[str, Any], key: str, where: SourceLocation) -> float | None:
    """`cost_usd` / `duration_ms`: absent, or a finite number >= 0 (as the results row holds it)."""
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise LoadError(f"invalid response: {key} {shown_number(value)} is not a number", location=where)
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number) or number < 0:
        raise LoadError(
            f"invalid response: {key} {shown_number(value)} is not a finite number >= 0", location=where
        )
    return number


def _call_count(data: dict[str, Any], where: SourceLocation) -> int | None:
    value = data.get("llm_call_count")
    problem = None if value is None else count_problem(value, "llm_call_count")
    if problem is not None:
        raise LoadError(f"invalid response: {problem}", location=where)
    return value if isinstance(value, int) else None


def _recorded(data: dict[str, Any], where: SourceLocation) -> RecordedResponse:
    test_id = data.get("test_id", data.get("id"))
    if not isinstance(test_id, str) or not test_id:
        raise LoadError("each line needs a `test_id`", location=where)
    text = data.get("output", data.get("text"))
    messages = _messages(data.get("messages") or [], where)
    if isinstance(text, list):  # an AgentV-style output message list
        messages, text = _messages(text, where), None
    if text is not None and not isinstance(text, str):
        text = json.dumps(text, ensure_ascii=False)
    calls = [_tool_call(c, where) for c in data.get("tool_calls") or []]
    if calls:
        messages = [*messages, Message(role="assistant", content="", tool_calls=calls)]
    if text and not any(m.role == "assistant" and m.content for m in messages):
        messages = [*messages, Message(role="assistant", content=text)]
    response = TargetResponse(
        text=text or final_answer(messages),
        messages=messages,
        token_usage=_token_usage(data.get("token_usage"), where),
        cost_usd=_measure(data, "cost_usd", where),
        duration_ms=_measure(data, "duration_ms", where),
        file_changes=data.get("file_changes"),
        llm_call_count=_call_count(data, where),
    )
    target = data.get("target")
    return RecordedResponse(test_id, response, where.line, target if isinstance(target, str) else None)


def read_responses(path: Path) -> list[RecordedResponse]:
    """Parse a responses JSONL file; a bad line raises `LoadError` at `file:line`."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise LoadError(f"cannot read responses file: {exc}", location=SourceLocation(str(path))) from None
    found: list[RecordedResponse] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = SourceLocation(str(path), number, 1)
        try:
            data = json.loads(line)
        except (ValueError, RecursionError) as exc:
            col = getattr(exc, "colno", 1)
            raise LoadError(
                f"invalid JSON: {exc}",
                location=SourceLocation(str(path), number, col),
                hint="one JSON object per line",
            ) from None
        if not isinstance(data, dict):
            raise LoadError("each line must be a JSON object", location=where)
        try:
            found.append(_recorded(data, where))
        except (msgspec.ValidationError, ValueError) as exc:
            raise LoadError(f"invalid response: {exc}", location=where) from None
    return found


# --------------------------------------------------------------------------- the offline session

JUDGE_TYPES = frozenset({"llm-grader", "rubrics", "composite"})
CONCURRENCY = 8


def uses_grader_model(test: Test) -> bool:
    """Whether grading `test` may call a grader model (llm-graders, rubrics, composites, or the
    implicit llm-grader from `criteria`)."""
    if not test.graders:
        return bool(test.criteria)
    return any(g.type in JUDGE_TYPES for g in test.graders)


@dataclass
class OfflineOutcome:
    """What `agentv-ci grade` reports."""

    results: list[TestResult]
    output_dir: Path
    unanswered: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # the eval file's rendered load warnings

    @property
    def all_errored(self) -> bool:
        return bool(self.results) and all(r.execution_status == "execution_error" for r in self.results)

    @property
    def any_failed(self) -> bool:
        return any(r.verdict == "fail" and r.execution_status != "execution_error" for r in self.results)

    @property
    def any_errored(self) -> bool:
        return any(r.execution_status == "execution_error" for r in self.results)

    @property
    def inconclusive(self) -> bool:
        """A grader errored, or a test has no recorded answer: the answers were not all judged."""
        return self.any_errored or bool(self.unanswered)

    def lines(self, *, three_way: bool = False) -> list[str]:
        from agentv_ci.scoring import three_way_verdict

        out: list[str] = []
        for r in self.results:
            label = "ERROR" if r.execution_status == "execution_error" else r.verdict.upper()
            extra = f" [{three_way_verdict(r.score)}]" if three_way and label != "ERROR" else ""
            out.append(f"{label:<5} {r.test_id}  score={r.score:.2f} threshold={r.threshold:g}{extra}")
            if r.error:
                out.append(f"      {r.error}")
            else:
                out.extend(f"      - {a.text}" for g in r.scores for a in g.assertions if not a.passed)
        passed = sum(1 for r in self.results if r.verdict == "pass")
        errors = sum(1 for r in self.results if r.execution_status == "execution_error")
        failed = len(self.results) - passed - errors
        skipped = sum(1 for r in self.results if r.verdict == "skip")
        summary = f"{len(self.results)} graded: {passed} passed, {failed - skipped} failed, {errors} errors"
        if skipped:
            summary += f", {skipped} skipped"
        if self.unanswered:
            summary += f"; {len(self.unanswered)} test(s) without a recorded answer (not run)"
        out.extend(f"NOT RUN {test_id}  no recorded answer" for test_id in self.unanswered)
        out.append(summary)
        out.append(f"results: {self.output_dir / 'index.jsonl'}")
        return out


def _check_answers(recorded: list[RecordedResponse], suite: Suite, responses_path: Path) -> None:
    known = {t.id for t in suite.tests}
    for item in recorded:
        if item.test_id not in known:
            sample = ", ".join(sorted(known)[:5]) or "none"
            raise LoadError(
                f"unknown test id {item.test_id!r} (not in {suite.path})",
                location=SourceLocation(str(responses_path), item.line, 1),
                hint=f"known ids: {sample}",
            )


async def run_offline_grading(
    eval_path: Path,
    responses_path: Path,
    *,
    output: Path | None,
    threshold: float | None,
    grader_target: str | None,
    targets_file: Path | None,
    allow_outside: tuple[Path, ...] = (),
) -> OfflineOutcome:
    """Load the suite and the recorded answers, grade every answer, write `index.jsonl`.
    `allow_outside`: directories outside the repository the eval file may reference."""
    from agentv_ci.grading import grade_test
    from agentv_ci.loading.suite_loader import load_suite
    from agentv_ci.reporting.results_file import ResultsWriter
    from agentv_ci.scoring import effective_threshold

    loaded = load_suite(eval_path, allow_outside=allow_outside)
    problems = [d for d in loaded.diagnostics if d.severity == "error"]
    if loaded.suite is None or problems:
        rendered = "\n".join(d.render() for d in problems or loaded.diagnostics)
        raise LoadError(f"{eval_path} has errors:\n{rendered}", hint=f"run `agentv-ci validate {eval_path}`")
    suite = loaded.suite
    recorded = read_responses(responses_path)
    if not recorded:
        raise LoadError("no recorded answers", location=SourceLocation(str(responses_path)))
    _check_answers(recorded, suite, responses_path)
    tests = {t.id: t for t in suite.tests}
    callers = _GraderCallers(eval_path, grader_target=grader_target, targets_file=targets_file)
    if grader_target or targets_file or any(uses_grader_model(tests[r.test_id]) for r in recorded):
        callers.load()
    limit = asyncio.Semaphore(CONCURRENCY)

    async def grade_one(item: RecordedResponse, attempt: int) -> TestResult:
        test = tests[item.test_id]
        target = item.target or test.execution.target or suite.execution.target or "recorded"
        async with limit:
            return await grade_test(
                test,
                item.response,
                target=target,
                eval_path=Path(suite.path),
                threshold=effective_threshold(threshold, test, suite),
                call_grader_target=callers.for_target(target),
                attempt=attempt,
            )

    seen: dict[str, int] = {}
    jobs = []
    for item in recorded:
        seen[item.test_id] = seen.get(item.test_id, -1) + 1
        jobs.append(grade_one(item, seen[item.test_id]))
    try:
        results = list(await asyncio.gather(*jobs))
    finally:
        await callers.aclose()
    if output is None:
        from agentv_ci.running.session import timestamp_dir

        output = timestamp_dir()
    answered = {r.test_id for r in recorded}
    unanswered = [t for t in suite.tests if t.id not in answered]
    with ResultsWriter(output / "index.jsonl") as writer:
        for result in results:
            writer.append(result)
        for test in unanswered:  # `report` on these results is inconclusive too, as `grade` is
            writer.append(_unanswered_row(test, suite, effective_threshold(threshold, test, suite)))
    warnings = [d.render() for d in loaded.diagnostics if d.severity == "warning"]
    return OfflineOutcome(results, output, [t.id for t in unanswered], warnings)


def _unanswered_row(test: Test, suite: Suite, threshold: float) -> TestResult:
    """A `not_run` row for a test the responses file holds no answer to."""
    from agentv_ci.clock import now_millis
    from agentv_ci.grading import relative_eval_path

    return TestResult(
        test_id=test.id,
        suite=test.suite or suite.name,
        target=test.execution.target or suite.execution.target or "recorded",
        score=0.0,
        execution_status="not_run",
        verdict="skip",
        threshold=threshold,
        error="no recorded answer",
        failure_reason_code="not_run",
        timestamp=now_millis(),
        eval_path=relative_eval_path(Path(suite.path)),
        line=test.location.line if test.location and test.location.line > 0 else None,
        metadata=dict(test.metadata),
        tags=list(test.tags),
    )


class _GraderCallers:
    """One grader caller per eval target, created on first use (targets.yaml read once)."""

    def __init__(self, eval_path: Path, *, grader_target: str | None, targets_file: Path | None) -> None:
        self.eval_path = eval_path
        self.grader_target = grader_target
        self.targets_file = targets_file
        self.targets: Any = None
        self.callers: dict[str, Any] = {}

    def load(self) -> None:
        from agentv_ci.targets.config import load_targets

        self.targets = load_targets(self.eval_path, explicit=self.targets_file)

    def for_target(self, target: str) -> GraderTargetCaller | None:
        if self.targets is None:
            return None
        if target not in self.callers:
            from agentv_ci.targets.grader_caller import make_grader_caller

            eval_target = target if target in self.targets.targets else None
            self.callers[target] = make_grader_caller(
                self.targets, eval_target=eval_target, override=self.grader_target, dry_run=False
            )
        caller: GraderTargetCaller | None = self.callers[target]
        return caller

    async def aclose(self) -> None:
        for caller in self.callers.values():
            if caller is not None:
                await caller.aclose()
