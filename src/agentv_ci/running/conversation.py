"""Live multi-turn tests (`mode: conversation` + `turns`), as AgentV v4 runs them.

For each turn its input is appended to the history, the target is called with the history (bounded
by `window_size` turns), and the answer is graded with the turn's own graders. Then the test's
graders grade the whole transcript (`role: content` blocks). The score is the `aggregation` (`mean`
default, `min`, `max`) of the turns' scores plus the transcript score, as AgentV: a turn with no
graders and no expected output scores 1; `on_turn_failure: stop` ends the conversation at the first
turn below the threshold and every turn left counts as 0 with verdict skip (so stopping can never
score higher than going on and failing). A target error ends it as an execution error.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import msgspec

from agentv_ci.errors import TargetError
from agentv_ci.model.result import AssertionResult, GraderResult, TargetResponse, TestResult, TokenUsage
from agentv_ci.model.suite import Message, Test
from agentv_ci.prompting import content_text
from agentv_ci.scoring import meets

Invoke = Callable[[Test, list[Message], int], Awaitable[TargetResponse]]
Grade = Callable[[Test, TargetResponse], Awaitable[TestResult]]


def _window(base: list[Message], turns: list[list[Message]], size: int | None) -> list[Message]:
    kept = turns if not size else turns[-size:]
    return [*base, *(m for turn in kept for m in turn)]


def transcript_text(messages: list[Message]) -> str:
    return "\n\n".join(f"{m.role}: {content_text(m.content)}" for m in messages)


def _aggregate(scores: list[float], how: str | None) -> float:
    if not scores:
        return 0.0
    if how == "min":
        return min(scores)
    if how == "max":
        return max(scores)
    return sum(scores) / len(scores)


def _sum_usage(usages: list[TokenUsage | None]) -> TokenUsage | None:
    present = [u for u in usages if u is not None]
    if not present:
        return None
    return TokenUsage(input=sum(u.input for u in present), output=sum(u.output for u in present))


async def run_conversation(test: Test, *, threshold: float, invoke: Invoke, grade: Grade) -> TestResult:
    """Run every turn of `test`; raises `TargetError` only if the very first call fails."""

    base = list(test.input)
    turn_messages: list[list[Message]] = []
    groups: list[GraderResult] = []
    scores: list[float] = []
    responses: list[TargetResponse] = []
    error: str | None = None
    last: TestResult | None = None
    for index, turn in enumerate(test.turns):
        history = _window(base, turn_messages, test.window_size)
        request_messages = [*history, *turn.input]
        turn_test = msgspec.structs.replace(
            test, input=request_messages, expected_output=turn.expected_output, graders=turn.graders, turns=[]
        )
        try:
            response = await invoke(turn_test, request_messages, index)
        except TargetError as exc:
            error = f"turn {index + 1}: {exc.message}"
            break
        responses.append(response)
        answer = [m for m in response.messages if m.role == "assistant"] or [
            Message(role="assistant", content=response.text)
        ]
        turn_messages.append([*turn.input, *answer])
        # A turn without graders of its own is not graded alone (no implicit grader per turn): the
        # test's graders judge the whole transcript below.
        graded_turn = (
            turn_test
            if turn.graders
            else msgspec.structs.replace(turn_test, criteria=None, expected_output=[])
        )
        result = await grade(graded_turn, response)
        last = result
        if result.execution_status == "execution_error":
            error = f"turn {index + 1}: {result.error}"
        if not turn.graders and not turn.expected_output:
            # AgentV: a turn with nothing to check scores 1 (pass) and counts in the aggregation.
            scores.append(1.0)
            groups.append(
                GraderResult(name=f"turn-{index + 1}", type="conversation-turn", score=1.0, verdict="pass")
            )
        elif turn.graders and result.verdict != "skip":
            scores.append(result.score)
            groups.append(
                GraderResult(
                    name=f"turn-{index + 1}",
                    type="conversation-turn",
                    score=result.score,
                    verdict=result.verdict,
                    scores=result.scores,
                )
            )
            if test.on_turn_failure == "stop" and not meets(result.score, threshold):
                # AgentV: every turn left is skipped and scores 0, so stopping never raises a score.
                for skipped in range(index + 1, len(test.turns)):
                    scores.append(0.0)
                    groups.append(
                        GraderResult(
                            name=f"turn-{skipped + 1}",
                            type="conversation-turn",
                            score=0.0,
                            verdict="skip",
                            assertions=[AssertionResult("Skipped due to previous turn failure", False)],
                        )
                    )
                break
        if error:
            break
    transcript = [*base, *(m for turn in turn_messages for m in turn)]
    if test.graders and error is None and responses:
        whole = TargetResponse(text=transcript_text(transcript), messages=transcript)
        whole_test = msgspec.structs.replace(test, turns=[], mode=None)
        result = await grade(whole_test, whole)
        if result.execution_status == "execution_error":
            error = f"conversation graders: {result.error}"
        elif result.verdict != "skip":
            scores.append(result.score)
            groups.append(
                GraderResult(
                    name="conversation", type="conversation", score=result.score, verdict=result.verdict,
                    scores=result.scores,
                )
            )  # fmt: skip
        last = last or result
    if last is None:
        raise TargetError(error or "conversation produced no answer")
    score = _aggregate(scores, test.aggregation)
    if error is not None:
        status, verdict, score = "execution_error", "fail", 0.0
    else:
        verdict = "pass" if meets(score, threshold) else "fail"
        status = "ok" if verdict == "pass" else "quality_failure"
    costs = [r.cost_usd for r in responses if r.cost_usd is not None]
    durations = [r.duration_ms for r in responses if r.duration_ms is not None]
    return msgspec.structs.replace(
        last,
        score=score,
        verdict=verdict,
        execution_status=status,
        error=error,
        failure_stage="agent" if error else None,
        failure_reason_code="conversation_error" if error else None,
        scores=groups,
        token_usage=_sum_usage([r.token_usage for r in responses]),
        cost_usd=sum(costs) if costs else None,
        duration_ms=sum(durations) if durations else None,
        output=transcript_text(transcript)[-20_000:],
    )
