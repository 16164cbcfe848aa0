"""llm-grader and rubrics end to end through a real OpenAI-compatible HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agentv_ci.graders.invoke import run_grader_spec
from agentv_ci.model.result import GraderResult, TargetResponse
from agentv_ci.model.suite import GraderSpec, Message, ToolCall
from agentv_ci.model.suite import Test as EvalTest
from agentv_ci.plugins import GraderTargetRequest, TargetRequest
from agentv_ci.targets.openai import OpenAIConfig, OpenAITarget
from tests.fakes.llm_server import Call, FakeLlmServer
from tests.graders.contexts import make_ctx

QUESTION_TEST = EvalTest(
    id="capital",
    input=[Message(role="user", content="What is the capital of France?")],
    expected_output=[Message(role="assistant", content="Paris")],
    criteria="Names Paris as the capital",
    metadata={"topic": "geo"},
)


def judge(
    server: FakeLlmServer,
    spec: GraderSpec,
    output: str = "The capital is Paris.",
    *,
    test: EvalTest = QUESTION_TEST,
    base_dir: Path = Path("/tmp"),
    response: TargetResponse | None = None,
) -> GraderResult:
    async def main() -> GraderResult:
        config = OpenAIConfig(
            base_url=server.base_url, api_key="test-key", model="judge-model", max_retries=0
        )
        target = OpenAITarget("judge", config, base_dir=base_dir)

        async def caller(request: GraderTargetRequest) -> TargetResponse:
            messages = list(request.messages)
            if request.system:
                messages.insert(0, Message(role="system", content=request.system))
            call = TargetRequest(test=EvalTest(id="grader"), messages=messages, prompt="", eval_path=base_dir)
            return await target.invoke(call)

        ctx = make_ctx(output, test=test, caller=caller, response=response, eval_path=base_dir / "EVAL.yaml")
        try:
            return await run_grader_spec(spec, ctx, base_dir=base_dir)
        finally:
            await target.aclose()

    return asyncio.run(main())


def llm(**config: Any) -> GraderSpec:
    return GraderSpec(type="llm-grader", name="quality", config=config)


def system_and_user(call: Call) -> tuple[str, str]:
    messages = call.body["messages"]
    return messages[0]["content"], messages[-1]["content"]


def test_default_prompt_carries_question_reference_answer_and_criteria(llm_server: FakeLlmServer) -> None:
    llm_server.responder = lambda call: json.dumps(
        {"score": 0.9, "assertions": [{"text": "Names Paris", "passed": True, "evidence": "Paris"}]}
    )
    result = judge(llm_server, llm())
    assert (result.score, result.verdict, result.error) == (0.9, "pass", None)
    assert result.assertions[0].text == "Names Paris" and result.assertions[0].evidence == "Paris"
    assert result.token_usage is not None and result.token_usage.input == 10
    assert len(llm_server.calls) == 1
    system, user = system_and_user(llm_server.calls[0])
    assert '"score"' in system and "assertions" in system
    assert "[[ ## criteria ## ]]\nNames Paris as the capital" in user
    assert "[[ ## question ## ]]\nWhat is the capital of France?" in user
    assert "[[ ## reference_answer ## ]]\nParis" in user
    assert "[[ ## answer ## ]]\nThe capital is Paris." in user
    assert "tool_calls" not in user  # only when the answer made tool calls


def test_default_prompt_appends_tool_calls_when_present(llm_server: FakeLlmServer) -> None:
    llm_server.responder = lambda call: '{"score": 1}'
    response = TargetResponse(
        text="done",
        messages=[
            Message(role="assistant", content="done", tool_calls=[ToolCall(tool="search", input={"q": "x"})])
        ],
    )
    judge(llm_server, llm(), response=response)
    _, user = system_and_user(llm_server.calls[0])
    assert '[[ ## tool_calls ## ]]\n{"tool": "search", "input": {"q": "x"}}' in user


@pytest.mark.parametrize(
    ("reply", "score", "passed"),
    [
        ('```json\n{"score": 0.5, "assertions": [{"text": "a", "passed": "true"}]}\n```', 0.5, True),
        (
            'Sure! Verdict: {"score": 1, "assertions": [{"text": "a", "passed": "false"}]} hope it helps',
            1.0,
            False,
        ),
        ('{"score": "0.75", "assertions": [{"text": "a", "passed": true}]}', 0.75, True),
        ('{"score": 0.2, "hits": ["a"], "misses": ["b"], "reasoning": "meh"}', 0.2, True),  # pre-v3.5 schema
        ('noise {not json} then {"score": 0.3, "assertions": [{"text": "a", "passed": "no"}]}', 0.3, False),
    ],
)
def test_tolerant_reply_parsing(llm_server: FakeLlmServer, reply: str, score: float, passed: bool) -> None:
    llm_server.responder = lambda call: reply
    result = judge(llm_server, llm())
    assert result.error is None
    assert result.score == score
    assert result.assertions[0].passed is passed
    assert len(llm_server.calls) == 1


def test_garbage_then_valid_reply_is_retried(llm_server: FakeLlmServer) -> None:
    replies = iter(["I think it's fine!", '{"score": 0.8, "assertions": []}'])
    llm_server.responder = lambda call: next(replies)
    result = judge(llm_server, llm())
    assert (result.score, result.verdict, result.error) == (0.8, "pass", None)
    assert len(llm_server.calls) == 2
    assert result.token_usage is not None and result.token_usage.input == 20  # both calls counted


def test_repair_request_quotes_the_invalid_reply(llm_server: FakeLlmServer) -> None:
    def responder(call: Call) -> str:
        if "invalid JSON structure" in call.last_user_text():
            return '{"score": 0.6, "assertions": [{"text": "fixed", "passed": false}]}'
        return "score: 0.6 (no JSON, sorry)"

    llm_server.responder = responder
    result = judge(llm_server, llm())
    assert len(llm_server.calls) == 4  # 3 attempts + 1 repair
    repair = llm_server.calls[3].body["messages"]
    # AgentV's repair: a fresh request with the same system prompt, quoting the invalid reply.
    assert [m["role"] for m in repair] == ["system", "user"]
    assert repair[0] == llm_server.calls[0].body["messages"][0]
    assert repair[1]["content"].startswith(
        "The following evaluation response has useful grading content but invalid JSON structure."
    )
    assert repair[1]["content"].endswith("Invalid response:\nscore: 0.6 (no JSON, sorry)")
    assert (result.score, result.verdict, result.error) == (0.6, "fail", None)


@pytest.mark.parametrize(
    ("bad", "good", "score"),
    [
        ('{"score": 7, "assertions": []}', '{"score": 0.7, "assertions": []}', 0.7),  # a 0-10 answer
        ('{"score": -0.5, "assertions": []}', '{"score": 0.25, "assertions": []}', 0.25),
    ],
)
def test_score_outside_0_to_1_is_an_invalid_reply_and_retried(
    llm_server: FakeLlmServer, bad: str, good: str, score: float
) -> None:
    # AgentV's schema is `score: number().min(0).max(1)`: out of range is a parse failure, never clamped.
    replies = iter([bad, good])
    llm_server.responder = lambda call: next(replies)
    result = judge(llm_server, llm())
    assert (result.score, result.error) == (score, None)
    assert len(llm_server.calls) == 2


def test_score_always_outside_0_to_1_is_an_execution_error(llm_server: FakeLlmServer) -> None:
    llm_server.responder = lambda call: '{"score": 8, "assertions": []}'
    result = judge(llm_server, llm())
    assert result.error is not None and "between 0 and 1" in result.error
    assert result.score == 0.0 and result.verdict == "skip"


def test_unparseable_judge_is_an_execution_error_not_a_score(llm_server: FakeLlmServer) -> None:
    llm_server.responder = lambda call: '{"verdict": "looks good"}'
    result = judge(llm_server, llm())
    assert result.error is not None and "could not be parsed" in result.error and "no `score`" in result.error
    # verdict skip + AgentV's text, but `error` is set: the test is an execution error, not a score
    assert result.score == 0.0 and result.verdict == "skip"
    assert result.assertions[0].text.startswith("Grader parse failure after 3 attempts: Failed to parse")
    assert len(llm_server.calls) == 4


def test_custom_prompt_file_renders_every_variable_and_alias(
    llm_server: FakeLlmServer, tmp_path: Path
) -> None:
    names = ["input", "output", "expected_output", "criteria", "metadata_json", "question", "answer",
             "candidate_answer", "reference_answer", "expected_outcome", "input_text", "output_text",
             "expected_output_text"]  # fmt: skip
    template = "\n".join(f"{n}=<{{{{ {n} }}}}>" for n in names) + "\nunknown=<{{ nope }}>"
    (tmp_path / "judge.md").write_text(template, encoding="utf-8")
    llm_server.responder = lambda call: '{"score": 1, "assertions": []}'
    result = judge(llm_server, llm(prompt="file://judge.md"), base_dir=tmp_path)
    assert result.error is None
    system, user = system_and_user(llm_server.calls[0])
    assert '"score"' in system  # the output schema is sent with custom templates too
    expected = {
        "input": "What is the capital of France?",
        "question": "What is the capital of France?",
        "input_text": "What is the capital of France?",
        "output": "The capital is Paris.",
        "answer": "The capital is Paris.",
        "candidate_answer": "The capital is Paris.",
        "output_text": "The capital is Paris.",
        "expected_output": "Paris",
        "reference_answer": "Paris",
        "expected_output_text": "Paris",
        "criteria": "Names Paris as the capital",
        "expected_outcome": "Names Paris as the capital",
        "metadata_json": '{"topic":"geo"}',  # compact, as JSON.stringify
    }
    for name, value in expected.items():
        assert f"{name}=<{value}>" in user
    assert "unknown=<{{ nope }}>" in user  # unknown names are left as written


def test_legacy_bare_prompt_path_is_read_with_a_warning(llm_server: FakeLlmServer, tmp_path: Path) -> None:
    """Only the legacy `llm_judge` dialect (the AgentEvals seeds: "prompt path or inline") reads a
    bare path as a file; an `llm-grader` takes it as the prompt text, as AgentV >= 4.6."""
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "q.md").write_text("Grade: {{output}}", encoding="utf-8")
    llm_server.responder = lambda call: '{"score": 1}'
    legacy = msgspec.structs.replace(llm(prompt="prompts/q.md"), written_type="llm_judge")
    result = judge(llm_server, legacy, base_dir=tmp_path)
    assert system_and_user(llm_server.calls[0])[1] == "Grade: The capital is Paris."
    assert result.details is not None and "legacy" in result.details["warnings"][0]
    judge(llm_server, llm(prompt="prompts/q.md"), base_dir=tmp_path)
    assert system_and_user(llm_server.calls[-1])[1] == "prompts/q.md"


def test_inline_prompt_is_a_template(llm_server: FakeLlmServer) -> None:
    llm_server.responder = lambda call: '{"score": 1}'
    judge(llm_server, llm(prompt="Is '{{output}}' right for: {{input}}?"))
    assert (
        system_and_user(llm_server.calls[0])[1]
        == "Is 'The capital is Paris.' right for: What is the capital of France??"
    )


@pytest.mark.parametrize(
    ("prompt", "message"),
    [
        ("file://missing.md", "prompt file not found"),
        ("file://no_output.md", "references neither {{output}}"),
    ],
)
def test_bad_prompt_files_are_grader_errors(
    llm_server: FakeLlmServer, tmp_path: Path, prompt: str, message: str
) -> None:
    (tmp_path / "no_output.md").write_text("Judge {{input}}", encoding="utf-8")
    result = judge(llm_server, llm(prompt=prompt), base_dir=tmp_path)
    assert result.error is not None and message in result.error
    assert llm_server.calls == []


RUBRICS = [
    {"id": "names-paris", "outcome": "Names Paris", "weight": 3.0, "required": True},
    {"id": "polite", "outcome": "Is polite", "weight": 1.0, "required": False, "operator": "correctness"},
]


def checks(**satisfied: bool) -> str:
    return json.dumps(
        {"checks": [{"id": k.replace("_", "-"), "satisfied": v, "reasoning": f"r-{k}"}
                    for k, v in satisfied.items()],
         "overall_reasoning": "ok"}
    )  # fmt: skip


@pytest.mark.parametrize(
    ("reply", "score", "verdict"),
    [
        (checks(names_paris=True, polite=True), 1.0, "pass"),
        (checks(names_paris=True, polite=False), 0.75, "fail"),  # below 0.8
        (checks(names_paris=False, polite=True), 0.25, "fail"),
        (checks(names_paris=True, polite="false"), 0.75, "fail"),  # type: ignore[arg-type]
        # unknown ids are ignored; only checked items count
        (
            '{"checks": [{"id": "names-paris", "satisfied": true}, {"id": "bogus", "satisfied": false}]}',
            1.0,
            "pass",
        ),
    ],
)
def test_rubric_checklist_scoring(llm_server: FakeLlmServer, reply: str, score: float, verdict: str) -> None:
    llm_server.responder = lambda call: reply
    result = judge(llm_server, GraderSpec(type="rubrics", name="rubrics", config={"criteria": RUBRICS}))
    assert result.error is None
    assert (result.score, result.verdict) == (score, verdict)
    system, user = system_and_user(llm_server.calls[0])
    assert "satisfied" in system
    assert "\n- [names-paris] (REQUIRED) (weight: 3): Names Paris\n" in user  # AgentV's line format
    assert "\n- [polite] (operator: correctness): Is polite\n" in user  # weight 1 is not shown
    assert "Operator guidance:\n- Correctness: mark satisfied only when" in user
    assert result.assertions[0].text == "[names-paris] Names Paris"


def test_required_rubric_unsatisfied_fails_verdict_but_keeps_earned_score(llm_server: FakeLlmServer) -> None:
    rubrics = [
        {"id": "a", "outcome": "A", "weight": 1.0, "required": True},
        *[{"id": f"b{i}", "outcome": "B", "weight": 1.0, "required": False} for i in range(9)],
    ]
    reply = {
        "checks": [{"id": "a", "satisfied": False}] + [{"id": f"b{i}", "satisfied": True} for i in range(9)]
    }
    llm_server.responder = lambda call: json.dumps(reply)
    result = judge(llm_server, llm(rubrics=rubrics))
    assert result.score == pytest.approx(0.9) and result.verdict == "fail"


def test_checklist_reply_without_matching_ids_is_retried_then_an_error(llm_server: FakeLlmServer) -> None:
    llm_server.responder = lambda call: '{"checks": [{"id": "other", "satisfied": true}]}'
    result = judge(llm_server, llm(rubrics=RUBRICS))
    assert result.error is not None and "no check matched a rubric id" in result.error


RANGES = [
    {"score_range": [0, 3], "outcome": "wrong"},
    {"score_range": [4, 6], "outcome": "partly"},
    {"score_range": [7, 10], "outcome": "right"},
]


def scores(**tenths: Any) -> str:
    return json.dumps({"checks": [{"id": k, "score": v, "reasoning": "x"} for k, v in tenths.items()]})


@pytest.mark.parametrize(
    ("rubrics", "reply", "score", "verdict", "passed"),
    [
        ([{"id": "acc", "outcome": "Accurate", "weight": 1, "required": False, "score_ranges": RANGES}],
         scores(acc=8), 0.8, "pass", [True]),
        ([{"id": "acc", "outcome": "Accurate", "weight": 1, "required": True, "score_ranges": RANGES}],
         scores(acc=9), 0.9, "fail", [True]),  # required without min_score must be 10/10
        ([{"id": "acc", "outcome": "Accurate", "weight": 1, "required": True, "min_score": 0.8,
           "score_ranges": RANGES}],
         scores(acc=9), 0.9, "pass", [True]),
        ([{"id": "acc", "weight": 3, "required": False, "score_ranges": RANGES},
          {"id": "tone", "weight": 1, "required": False, "score_ranges": RANGES}],
         scores(acc=10, tone=2), 0.8, "pass", [True, False]),
        ([{"id": "acc", "weight": 1, "required": False, "min_score": 0.7, "score_ranges": RANGES},
          {"id": "tone", "weight": 1, "required": False, "score_ranges": RANGES}],
         scores(acc=6, tone=10), 0.8, "fail", [False, True]),  # below min_score -> fail
        ([{"id": "acc", "weight": 1, "required": False, "score_ranges": {0: "bad", 5: "ok", 8: "good"}}],
         scores(acc="7"), 0.7, "fail", [True]),  # shorthand ranges; numeric strings accepted
    ],
)  # fmt: skip
def test_score_range_mode(llm_server: FakeLlmServer, rubrics: list, reply: str, score: float, verdict: str,
                          passed: list[bool]) -> None:  # fmt: skip
    llm_server.responder = lambda call: reply
    result = judge(llm_server, llm(rubrics=rubrics))
    assert result.error is None
    assert result.score == pytest.approx(score) and result.verdict == verdict
    assert [a.passed for a in result.assertions] == passed
    assert result.details is not None and "raw_scores" in result.details
    system, user = system_and_user(llm_server.calls[0])
    assert "integer (0-10)" in system
    assert "  - Score 0-3: wrong" in user or "  - Score 0-4: bad" in user
    assert "[[ ## scoring_criteria ## ]]\n\n### Criterion: acc" in user
    assert result.assertions[0].text.startswith("[acc] ") and " - Score: " in result.assertions[0].text


def test_score_range_check_outside_0_to_10_is_retried(llm_server: FakeLlmServer) -> None:
    # AgentV: `score: number().int().min(0).max(10)`; 15 is an invalid reply (retried), not a 10.
    replies = iter([scores(acc=15), scores(acc=6)])
    llm_server.responder = lambda call: next(replies)
    rubrics = [{"id": "acc", "weight": 1, "required": False, "score_ranges": RANGES}]
    result = judge(llm_server, llm(rubrics=rubrics))
    assert result.error is None and result.score == pytest.approx(0.6)
    assert len(llm_server.calls) == 2


def test_score_ranges_must_cover_0_to_10(llm_server: FakeLlmServer) -> None:
    gap = [{"score_range": [0, 3], "outcome": "a"}, {"score_range": [5, 10], "outcome": "b"}]
    result = judge(llm_server, llm(rubrics=[{"id": "x", "outcome": "X", "score_ranges": gap}]))
    assert result.error is not None and "cover every integer 0..10" in result.error


def test_rubrics_grader_needs_items(llm_server: FakeLlmServer) -> None:
    result = judge(llm_server, GraderSpec(type="rubrics", name="r", config={"criteria": []}))
    assert result.error is not None and "no `criteria` items" in result.error


def test_grader_target_http_error_is_a_grader_error(llm_server: FakeLlmServer) -> None:
    llm_server.fail_next(500, times=5)
    result = judge(llm_server, llm())
    assert result.error is not None and result.score == 0.0


def test_dry_run_mock_judge_answer_scores_rubrics_without_checks(tmp_path: Path) -> None:
    from agentv_ci.graders.invoke import run_grader_spec
    from agentv_ci.targets.mock import DRY_RUN_ANSWER, MockConfig, MockTarget

    mock = MockTarget("judge", MockConfig(response=DRY_RUN_ANSWER, dry_run=True), base_dir=tmp_path)

    async def caller(request: GraderTargetRequest) -> TargetResponse:
        call = TargetRequest(test=EvalTest(id="g"), messages=request.messages, prompt="", eval_path=tmp_path)
        return await mock.invoke(call)

    ctx = make_ctx("anything", test=QUESTION_TEST, caller=caller)
    ctx.dry_run = True
    result = asyncio.run(run_grader_spec(llm(rubrics=RUBRICS), ctx, base_dir=tmp_path))
    assert result.error is None and result.score == 1.0
    ctx.dry_run = False  # outside dry-run, a checklist reply without checks is not a score
    result = asyncio.run(run_grader_spec(llm(rubrics=RUBRICS), ctx, base_dir=tmp_path))
    assert result.error is not None and "no check matched" in result.error


def test_executable_prompt_generator(llm_server: FakeLlmServer, tmp_path: Path) -> None:
    import sys

    (tmp_path / "make_prompt.py").write_text(
        "import json, sys\n"
        "p = json.load(sys.stdin)\n"
        "print(f\"Grade strictly ({p['config']['tone']}): {p['output']}\")\n"
    )
    llm_server.responder = lambda call: '{"score": 0.5}'
    prompt = {"command": [sys.executable, "make_prompt.py"], "config": {"tone": "harsh"}}
    result = judge(llm_server, llm(prompt=prompt), base_dir=tmp_path)
    assert result.error is None and result.score == 0.5
    assert system_and_user(llm_server.calls[0])[1] == "Grade strictly (harsh): The capital is Paris.\n"
    failing = judge(llm_server, llm(prompt={"command": "echo oops >&2; exit 1"}), base_dir=tmp_path)
    assert failing.error is not None and "prompt script exited 1: oops" in failing.error
