from __future__ import annotations

import msgspec
import pytest

from agentv_ci.model.result import GraderResult
from agentv_ci.model.result import TestResult as Result
from agentv_ci.model.suite import ExecutionSpec, Suite
from agentv_ci.model.suite import Test as EvalTest
from agentv_ci.scoring import (
    aggregate_attempts,
    apply_negate,
    combine_grader_results,
    effective_threshold,
    three_way_verdict,
)


def gr(
    score: float,
    weight: float = 1.0,
    *,
    verdict: str | None = None,
    required: bool = False,
    min_score: float | None = None,
    error: str | None = None,
) -> GraderResult:
    return GraderResult(
        name="g",
        type="contains",
        score=score,
        weight=weight,
        required=required,
        min_score=min_score,
        verdict=verdict or ("pass" if score >= 0.8 else "fail"),
        error=error,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("results", "threshold", "expected"),
    [
        ([gr(1.0), gr(0.0)], 0.8, (0.5, "fail")),
        ([gr(1.0, 3), gr(0.0, 1)], 0.75, (0.75, "pass")),
        ([gr(1.0, 0), gr(0.0, 0)], 0.8, (0.0, "fail")),  # weights sum to 0 -> 0
        ([gr(1.0), gr(0.0, verdict="skip")], 0.8, (1.0, "pass")),  # skipped graders don't count
        ([gr(0.0, verdict="skip")], 0.8, (0.0, "skip")),
        ([], 0.8, (0.0, "skip")),
        ([gr(1.0), gr(1.0), gr(1.0), gr(1.0), gr(0.0)], 0.8, (0.8, "pass")),
        ([gr(0.7, 1), gr(0.9, 1)], 0.8, (0.8, "pass")),
        # no float tolerance, as AgentV: (0.1 + 0.7) / 1.0 = 0.7999999999999999 fails a 0.8 bar
        ([gr(1.0, 0.1), gr(0.0, 0.2), gr(1.0, 0.7)], 0.8, (0.8, "fail")),
        # a required grader that skipped scores 0 against its bar: the test is zeroed (AgentV)
        ([gr(1.0), gr(0.0, verdict="skip", required=True)], 0.8, (0.0, "fail")),
        # required below the test threshold zeroes the test
        ([gr(1.0, 5), gr(0.5, required=True)], 0.8, (0.0, "fail")),
        # required with its own min_score bar
        ([gr(1.0), gr(0.5, required=True, min_score=0.5)], 0.8, (0.75, "fail")),
        ([gr(1.0), gr(0.6, required=True, min_score=0.5)], 0.5, (0.8, "pass")),
        ([gr(1.0), gr(0.4, required=True, min_score=0.5)], 0.5, (0.0, "fail")),
        # the bar falls back to the (lower) test threshold
        ([gr(0.6, required=True)], 0.5, (0.6, "pass")),
        ([gr(0.0, error="boom"), gr(1.0)], 0.8, (0.5, "fail")),  # an errored grader counts as 0
    ],
)
def test_combine_grader_results(results: list[GraderResult], threshold: float, expected: tuple) -> None:
    score, verdict = combine_grader_results(results, threshold)
    assert (round(score, 9), verdict) == expected


def test_effective_threshold_precedence() -> None:
    suite = Suite(name="s", path="/e.yaml", execution=ExecutionSpec(threshold=0.6))
    test = EvalTest(id="t", execution=ExecutionSpec(threshold=0.7))
    bare = EvalTest(id="u")
    assert effective_threshold(0.9, test, suite) == 0.9
    assert effective_threshold(None, test, suite) == 0.7
    assert effective_threshold(None, bare, suite) == 0.6
    assert effective_threshold(None, bare, None) == 0.8
    assert effective_threshold(0.0, test, suite) == 0.0  # an explicit 0 is not "unset"


@pytest.mark.parametrize(
    ("score", "verdict"),
    [(1.0, "pass"), (0.8, "pass"), (0.79, "borderline"), (0.6, "borderline"), (0.59, "fail"), (0.0, "fail")],
)
def test_three_way_verdict(score: float, verdict: str) -> None:
    assert three_way_verdict(score) == verdict


def test_negate_keeps_errors_and_skips() -> None:
    errored = gr(0.0, error="crash")
    assert apply_negate(errored) is errored
    skipped = gr(0.0, verdict="skip")
    assert apply_negate(skipped) is skipped
    flipped = apply_negate(gr(0.25))
    assert (flipped.score, flipped.verdict) == (0.75, "pass")


def attempt(score: float, *, status: str = "ok", cost: float = 0.01, n: int = 0) -> Result:
    verdict = "pass" if score >= 0.8 else "fail"
    if status == "ok" and verdict == "fail":
        status = "quality_failure"
    return Result(
        test_id="t",
        suite="s",
        target="x",
        score=score,
        verdict=verdict,  # type: ignore[arg-type]
        execution_status=status,
        cost_usd=cost,
        attempt=n,
    )  # type: ignore[arg-type]


def test_pass_at_k_takes_the_best_attempt() -> None:
    result = aggregate_attempts([attempt(0.2, n=0), attempt(0.9, n=1), attempt(0.5, n=2)], "pass_at_k")
    assert (result.score, result.verdict, result.execution_status) == (0.9, "pass", "ok")
    assert result.aggregation is not None and result.aggregation.passed_attempts == 1
    assert result.aggregation.total_attempts == 3
    assert [t.attempt for t in result.trials] == [0, 1, 2]
    assert result.cost_usd == pytest.approx(0.03)


def test_pass_all_needs_every_attempt() -> None:
    result = aggregate_attempts([attempt(1.0), attempt(0.85), attempt(0.5)], "pass_all")
    assert (result.score, result.verdict, result.execution_status) == (0.5, "fail", "quality_failure")
    assert aggregate_attempts([attempt(1.0), attempt(0.9)], "pass_all").verdict == "pass"


def test_mean_strategy() -> None:
    result = aggregate_attempts([attempt(1.0), attempt(0.6), attempt(0.8)], "mean")
    # summed left to right like AgentV: 2.4000000000000004 / 3 = 0.8000000000000002 (fmean: 0.7999...)
    assert result.score == 0.8000000000000002 and result.verdict == "pass"
    assert result.aggregation is not None and result.aggregation.stddev == pytest.approx(0.2)


@pytest.mark.parametrize("strategy", ["mean", "confidence_interval"])
def test_mean_and_ci_rows_show_the_best_attempts_graders_like_agentv(strategy: str) -> None:
    def tagged(score: float, n: int) -> Result:
        grader = GraderResult(name=f"g{n}", type="contains", score=score, verdict="fail", weight=1.0)
        return msgspec.structs.replace(attempt(score, n=n), scores=[grader])

    result = aggregate_attempts([tagged(0.2, 0), tagged(0.9, 1), tagged(0.9, 2), tagged(0.4, 3)], strategy)
    assert [g.name for g in result.scores] == ["g1"]  # the first attempt with the highest score


def test_confidence_interval_uses_the_t_table_lower_bound() -> None:
    result = aggregate_attempts([attempt(1.0), attempt(0.6), attempt(0.8)], "confidence_interval")
    # mean 0.8, sd 0.2, n 3 -> t(df=2) = 4.303 -> 0.8 - 4.303 * 0.2 / sqrt(3) = 0.30313
    assert result.score == pytest.approx(0.8 - 4.303 * 0.2 / 3**0.5)
    assert result.verdict == "fail"
    assert result.aggregation is not None and result.aggregation.ci95_upper == 1.0  # clamped
    single = aggregate_attempts([attempt(0.9)], "confidence_interval")
    assert single.score == 0.9


def test_all_attempts_errored_is_an_execution_error_and_errors_are_ignored_otherwise() -> None:
    errored = aggregate_attempts([attempt(0.0, status="execution_error")] * 2, "pass_at_k")
    assert errored.execution_status == "execution_error" and errored.verdict == "fail"
    mixed = aggregate_attempts([attempt(0.0, status="execution_error"), attempt(0.9)], "mean")
    assert (mixed.score, mixed.execution_status) == (0.9, "ok")
