"""Issue 31: `AnswerGraders` grades a test's answer-only graders in one call. Its results and the
test's score and verdict are those of the usual path (each grader settled by `grade_answer_now`, the
score by `combine_grader_results`), whatever the answer, the threshold or the secrets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from agentv_ci.graders.answer_graders import AnswerGraders
from agentv_ci.graders.answer_only import answer_grader
from agentv_ci.graders.invoke import grade_answer_now
from agentv_ci.model.result import GraderResult
from agentv_ci.model.suite import GraderSpec
from agentv_ci.plugins import build_grader
from agentv_ci.scoring import combine_grader_results
from agentv_ci.security.redaction import SECRETS, register_secret

SECRET = "tok-Lane0123456789abcdef"
ANSWERS = [
    "answer number 7 for suite 3",
    "no match at all",
    "",
    "ANSWER NUMBER 12\x1b[31m red \u202e flipped \ud800 lone",
    "emoji 😀 answer number 99 " + "x" * 5_000,
    f"answer number 5 leaks {SECRET} here",
    "answer number 1\n" * 400,
]


def _graders(*specs: GraderSpec) -> AnswerGraders:
    built = []
    for spec in specs:
        grader = answer_grader(build_grader(spec, base_dir=Path(".")))
        assert grader is not None
        built.append((spec, grader))
    return AnswerGraders(built)


def _spec(type_: str, name: str, value: Any, **fields: Any) -> GraderSpec:
    return GraderSpec(type=type_, name=name, config={"value": value}, **fields)


def _timeless(results: list[GraderResult]) -> list[GraderResult]:
    return [msgspec.structs.replace(r, duration_ms=None) for r in results]


def _usual(graders: AnswerGraders, output: str, threshold: float) -> tuple[list[GraderResult], float, str]:
    results = [grade_answer_now(spec, grader, output) for spec, grader in graders.graders]
    assert all(r is not None for r in results)
    settled = [r for r in results if r is not None]
    return settled, *combine_grader_results(settled, threshold)


@pytest.mark.parametrize("secret", [False, True])
def test_the_results_score_and_verdict_are_the_usual_paths(secret: bool) -> None:
    graders = _graders(
        _spec("contains", "c", "answer number"),
        _spec("regex", "r", r"^answer number \d+", weight=2.0),
        _spec("icontains", "i", "SUITE", required=True),
    )
    if secret:
        register_secret(SECRET)
    try:
        for output in ANSWERS:
            for threshold in (0.8, 0.5, 0.0, 1.0):
                graded = graders.grade(output, threshold)
                assert graded is not None
                usual = _usual(graders, output, threshold)
                assert (_timeless(graded[0]), *graded[1:]) == (_timeless(usual[0]), *usual[1:])
                assert all(r.duration_ms is not None and r.duration_ms >= 0 for r in graded[0])
                shown = repr(graded[0])
                # masked as soon as the run knows it (and quoted when it does not)
                assert (SECRET in shown) is (SECRET in output and not secret)
    finally:
        SECRETS.clear()


def test_a_pass_fail_pattern_is_scored_again_under_another_threshold() -> None:
    """The score of a pattern is kept per threshold: one passing grader of two is 0.5, a pass at a
    0.5 threshold and a fail at 0.8, asked in turns."""
    graders = _graders(_spec("contains", "a", "alpha"), _spec("contains", "b", "beta"))
    verdicts = []
    for threshold in (0.5, 0.8, 0.5, 0.8):
        graded = graders.grade("alpha only", threshold)
        assert graded is not None
        verdicts.append(graded[1:])
    assert verdicts == [(0.5, "pass"), (0.5, "fail"), (0.5, "pass"), (0.5, "fail")]


def test_negate_and_a_bar_of_its_own_are_settled_as_usual() -> None:
    graders = _graders(
        _spec("contains", "n", "answer", negate=True),
        _spec("contains", "m", "answer", required=True, min_score=1.0),
    )
    for output in ("the answer", "nothing"):
        graded = graders.grade(output, 0.8)
        assert graded is not None
        usual = _usual(graders, output, 0.8)
        assert (_timeless(graded[0]), *graded[1:]) == (_timeless(usual[0]), *usual[1:])
    graded = graders.grade("the answer", 0.8)
    assert graded is not None and graded[0][0].verdict == "fail" and graded[0][1].min_score == 1.0


def test_a_grader_that_raises_is_its_error_never_a_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentv_ci.graders.text import Regex

    graders = _graders(_spec("contains", "c", "answer"), _spec("regex", "r", "answer"))

    def broken(self: Regex, output: str) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(Regex, "answer_assertion", broken)
    graded = graders.grade("the answer", 0.8)
    assert graded is not None
    results, score, verdict = graded
    assert [r.error for r in results] == [None, "RuntimeError: boom"]
    assert results[1].score == 0.0 and score == 0.5 and verdict == "fail"
