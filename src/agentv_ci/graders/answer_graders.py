"""A test's graders that read the answer's text alone (graders/answer_only.py), built once and shared
by every test with the same specs (a suite's tests share theirs), graded in one call per answer."""

from __future__ import annotations

import time

from agentv_ci.graders.answer_only import AnswerGrader
from agentv_ci.graders.invoke import grade_answer_now, own_bar
from agentv_ci.model.result import GraderResult, Verdict
from agentv_ci.model.suite import GraderSpec
from agentv_ci.scoring import combine_grader_results

__all__ = ["AnswerGraders"]

_Graded = tuple[list[GraderResult], float, Verdict]  # the results, the test's score and verdict
_SCORED_LIMIT = 64  # combined scores kept per set of graders (one per pass/fail pattern and threshold)


class AnswerGraders:
    """The built graders of a set of specs, in order. When none has `negate` or a bar of its own, each
    result is its assertion under the spec's fields (score 1 or 0), built here with one clock reading
    between two graders; the test's score then depends only on which graders passed and the threshold,
    so `combine_grader_results` runs once per such pattern."""

    __slots__ = ("_direct", "_scored", "graders")

    def __init__(self, graders: list[tuple[GraderSpec, AnswerGrader]]) -> None:
        self.graders = graders
        self._direct = [
            (grader, spec.name, spec.type, spec.weight, bool(spec.required)) for spec, grader in graders
        ]
        if any(spec.negate or own_bar(spec) is not None for spec, _ in graders):
            self._direct = []  # settled one by one (grade_answer_now)
        self._scored: dict[int, tuple[float, float, Verdict]] = {}  # passes -> threshold, score, verdict

    def grade(self, output: str, threshold: float) -> _Graded | None:
        """The results of the graders on the answer text `output`, with the test's score and verdict
        under `threshold`; None when a grader needs awaiting after all (a regex past its inline slice)."""
        if self._direct:
            try:
                return self._grade_direct(output, threshold)
            except Exception:  # graded again one by one, which makes it that grader's error result
                pass
        results: list[GraderResult] = []
        for spec, grader in self.graders:
            result = grade_answer_now(spec, grader, output)
            if result is None:
                return None
            results.append(result)
        return results, *combine_grader_results(results, threshold)

    def _grade_direct(self, output: str, threshold: float) -> _Graded | None:
        """`grade` when every result is its assertion; raises what a grader raised."""
        results: list[GraderResult] = []
        passes = 0
        clock = time.perf_counter
        started = clock()
        for grader, name, type_, weight, required in self._direct:
            assertion = grader.answer_assertion(output)
            if assertion is None:
                return None
            ended = clock()
            passed = assertion.passed
            results.append(
                GraderResult(
                    name=name,
                    type=type_,
                    score=1.0 if passed else 0.0,
                    verdict="pass" if passed else "fail",
                    weight=weight,
                    assertions=[assertion],
                    required=required,
                    duration_ms=round((ended - started) * 1e6) / 1000,  # outcome.milliseconds, inlined
                )
            )
            passes = passes << 1 | bool(passed)
            started = ended
        scored = self._scored.get(passes)
        if scored is None or scored[0] != threshold:
            if len(self._scored) >= _SCORED_LIMIT:
                self._scored.clear()
            score, verdict = combine_grader_results(results, threshold)
            scored = self._scored[passes] = (threshold, score, verdict)
        return results, scored[1], scored[2]
