from __future__ import annotations

import asyncio
from pathlib import Path

from agentv_ci.grading import grade_test
from agentv_ci.model.result import TargetResponse, TokenUsage
from agentv_ci.model.source import SourceLocation
from agentv_ci.model.suite import GraderSpec, Message
from agentv_ci.model.suite import Test as EvalTest


def spec(type_: str, name: str, **kw: object) -> GraderSpec:
    common = {k: kw.pop(k) for k in list(kw) if k in ("weight", "required", "min_score", "negate")}
    return GraderSpec(type=type_, name=name, config=kw, **common)  # type: ignore[arg-type]


def run(test: EvalTest, response: TargetResponse, threshold: float = 0.8, tmp: Path | None = None):
    eval_path = (tmp or Path("/tmp")) / "EVAL.yaml"
    return asyncio.run(grade_test(test, response, target="mock", eval_path=eval_path, threshold=threshold))


def test_grade_test_fills_the_result_row() -> None:
    test = EvalTest(
        id="capital",
        suite="geo",
        input=[Message(role="user", content="Capital of France?")],
        graders=[
            spec("contains", "has-paris", value="Paris", weight=3),
            spec("equals", "exact", value="Paris"),
        ],
        location=SourceLocation("/tmp/EVAL.yaml", 12, 5),
        metadata={"owner": "geo"},
        tags=["smoke"],
        conversation_id="c1",
    )
    response = TargetResponse(
        text="It is Paris.", token_usage=TokenUsage(input=10, output=3), cost_usd=0.002, duration_ms=120.0
    )
    result = run(test, response)
    assert result.score == 0.75 and result.verdict == "fail"
    assert result.execution_status == "quality_failure"
    assert [s.name for s in result.scores] == ["has-paris", "exact"]
    assert result.scores[0].weight == 3
    assert (result.test_id, result.suite, result.target, result.line) == ("capital", "geo", "mock", 12)
    assert result.output == "It is Paris." and result.input == "Capital of France?"
    assert result.token_usage == TokenUsage(input=10, output=3) and result.cost_usd == 0.002
    assert result.duration_ms == 120.0 and result.threshold == 0.8
    assert result.metadata == {"owner": "geo"} and result.tags == ["smoke"] and result.conversation_id == "c1"
    assert result.timestamp is not None and result.timestamp.endswith("Z")
    assert run(test, response, threshold=0.7).verdict == "pass"


def test_output_comes_from_the_last_assistant_message_and_is_capped() -> None:
    test = EvalTest(id="t", graders=[spec("contains", "c", value="tail")])
    huge = "y" * 50_000 + "tail"
    response = TargetResponse(
        messages=[Message(role="assistant", content="first"), Message(role="assistant", content=huge)]
    )
    result = run(test, response)
    assert result.score == 1.0  # graders see the whole answer
    assert result.output is not None and len(result.output) < 21_000 and "truncated" in result.output


def test_a_bad_grader_config_is_an_execution_error_naming_the_grader() -> None:
    test = EvalTest(id="t", graders=[spec("contains", "ok", value="a"), spec("regex", "broken", value="(")])
    result = run(test, TargetResponse(text="a"))
    assert result.execution_status == "execution_error"
    assert result.score == 0.0 and result.verdict == "fail"
    assert (
        result.error is not None and "broken" in result.error and "invalid regular expression" in result.error
    )
    assert result.scores[0].error is None and result.scores[1].error is not None


def test_unknown_grader_type_is_an_execution_error() -> None:
    test = EvalTest(id="t", graders=[spec("no-such-grader", "x")])
    result = run(test, TargetResponse(text="a"))
    assert result.execution_status == "execution_error"
    assert "unknown grader type 'no-such-grader'" in (result.error or "")


def test_required_grader_below_bar_zeroes_the_test() -> None:
    test = EvalTest(
        id="t",
        graders=[
            spec("contains", "a", value="a", weight=10),
            spec("contains", "must", value="zzz", required=True),
        ],
    )
    result = run(test, TargetResponse(text="a"))
    assert result.score == 0.0 and result.verdict == "fail" and result.execution_status == "quality_failure"


def test_implicit_llm_grader_from_criteria_without_a_grader_target_errors_clearly() -> None:
    test = EvalTest(id="t", criteria="Says hello")
    result = run(test, TargetResponse(text="hello"))
    assert [s.type for s in result.scores] == ["llm-grader"]
    assert result.execution_status == "execution_error"
    assert "no grader target configured" in (result.error or "")


def test_no_graders_and_no_criteria_is_a_skip() -> None:
    result = run(EvalTest(id="t"), TargetResponse(text="x"))
    assert result.verdict == "skip" and result.failure_reason_code == "no_graders"


def test_graders_that_do_io_overlap_and_inline_ones_still_score(tmp_path: Path) -> None:
    # Two code-graders (real subprocesses) must run concurrently: their run intervals overlap.
    script = tmp_path / "slow_grader.py"
    script.write_text(
        "import json, sys, time\n"
        "name = sys.argv[1]\n"
        "start = time.time(); time.sleep(0.4)\n"
        "open(name, 'w').write(f'{start} {time.time()}')\n"
        "print(json.dumps({'score': 1.0, 'assertions': [{'text': name, 'passed': True}]}))\n"
    )
    graders = [
        spec("code-grader", "first", command=["python3", str(script), str(tmp_path / "a.txt")]),
        spec("contains", "inline", value="ok"),
        spec("code-grader", "second", command=["python3", str(script), str(tmp_path / "b.txt")]),
    ]
    test = EvalTest(id="io", suite="s", input=[Message(role="user", content="q")], graders=graders)
    result = run(test, TargetResponse(text="ok"), tmp=tmp_path)
    assert [g.name for g in result.scores] == ["first", "inline", "second"]  # order kept
    assert result.score == 1.0 and result.execution_status == "ok"
    (a0, a1), (b0, b1) = (tuple(map(float, (tmp_path / f).read_text().split())) for f in ("a.txt", "b.txt"))
    assert max(a0, b0) < min(a1, b1)  # the two intervals overlap


def test_a_test_without_graders_gets_agentvs_implicit_llm_grader_from_its_reference() -> None:
    from agentv_ci.grading import graders_for

    answered = EvalTest(id="t", expected_output=[Message(role="assistant", content="4")])
    assert [(g.type, g.name) for g in graders_for(answered)] == [("llm-grader", "llm-grader")]
    assert graders_for(EvalTest(id="t", criteria="says 4"))[0].type == "llm-grader"
    assert graders_for(EvalTest(id="t")) == []  # nothing to grade: validate's E112 refuses it


def test_a_skipped_grader_makes_an_execution_error_never_a_not_run_row() -> None:
    from agentv_ci.results.totals import outcome_of

    members = [{"type": "contains", "name": "has-a", "value": "a"}]
    test = EvalTest(id="t", graders=[spec("composite", "combo", assertions=members)])  # no aggregator: skips
    result = run(test, TargetResponse(text="answer"))
    assert result.execution_status == "execution_error" and result.verdict == "fail"
    assert (result.failure_stage, result.failure_reason_code) == ("evaluator", "evaluator_error")
    assert result.error is not None and result.error.startswith("combo: composite has no `aggregator`")
    assert outcome_of(result) == "error"
