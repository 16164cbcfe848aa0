"""The scoring contract (AgentV v4.42.4 `runEvaluatorList` + the seeds' opt-ins).

- test score = weighted mean of the non-skipped graders' scores (0 when the weights sum to 0);
- a `required` grader below its bar (`min_score`, else numeric `required`, else the test threshold)
  forces the test score to 0 (a required grader that skipped counts as 0 there, as in AgentV);
- comparisons are exact (`score >= bar`, no float tolerance), as AgentV's;
- `negate` flips a grader's score and verdict (applied per grader, before the required gate);
- verdict: score >= threshold -> pass, else fail; no scorable grader -> skip;
- threshold: CLI > test `execution.threshold` > suite `execution.threshold` > 0.8.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Literal, assert_type

import msgspec

from agentv_ci.model.result import (
    AttemptSummary,
    GraderResult,
    TestResult,
    TokenUsage,
    Verdict,
)
from agentv_ci.model.suite import RepeatStrategy, Suite, Test
from agentv_ci.statistics.student_t import t_critical_95

__all__ = [
    "DEFAULT_THRESHOLD",
    "aggregate_attempts",
    "apply_negate",
    "combine_grader_results",
    "effective_threshold",
    "meets",
    "three_way_verdict",
]

DEFAULT_THRESHOLD = 0.8


def js_sum(values: Iterable[float]) -> float:
    """Left-to-right float addition, as JavaScript's `reduce((a, b) => a + b, 0)` (Python's `fsum`,
    `statistics.fmean` and, from 3.12, `sum` round differently and can flip a verdict at the bar)."""
    total = 0.0
    for value in values:
        total += value
    return total


def _js_mean(values: list[float]) -> float:
    return js_sum(values) / len(values)


def _js_stdev(values: list[float], mean: float) -> float:
    """Sample standard deviation computed as AgentV does."""
    return math.sqrt(js_sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def meets(score: float, bar: float) -> bool:
    """`score >= bar`, exactly as AgentV compares (no float tolerance: a weighted mean of
    0.7999999999999999 fails a 0.8 bar there, so it fails here too)."""
    return score >= bar


def effective_threshold(cli: float | None, test: Test, suite: Suite | None) -> float:
    """CLI flag > test `execution.threshold` > suite `execution.threshold` > 0.8."""
    if cli is not None:
        return cli
    if test.execution.threshold is not None:
        return test.execution.threshold
    if suite is not None and suite.execution.threshold is not None:
        return suite.execution.threshold
    return DEFAULT_THRESHOLD


def apply_negate(result: GraderResult) -> GraderResult:
    """AgentV's `negate`: score -> 1 - score, pass <-> fail (skip stays), every assertion flipped with
    its evidence prefixed `[Negated]` and its `expected` with `not `. A grader that errored stays an
    error (never turned into a pass)."""
    if result.error is not None or result.verdict == "skip":
        return result
    flipped: Verdict = "fail" if result.verdict == "pass" else "pass"
    assertions = [
        msgspec.structs.replace(
            a,
            passed=not a.passed,
            evidence=f"[Negated] {a.evidence}" if a.evidence else "[Negated]",
            expected=f"not {a.expected}" if a.expected is not None else None,
        )
        for a in result.assertions
    ]
    return msgspec.structs.replace(result, score=1.0 - result.score, verdict=flipped, assertions=assertions)


def _required_bar(result: GraderResult, threshold: float) -> float:
    return result.min_score if result.min_score is not None else threshold


def combine_grader_results(results: Sequence[GraderResult], threshold: float) -> tuple[float, Verdict]:
    """Test score and verdict from its graders' results (negate already applied per grader).

    Skipped graders don't count; errored graders count as score 0 (the caller also marks the test an
    execution error). Returns `(0.0, "skip")` when nothing could be scored.
    """
    # One pass, adding left to right as js_sum does (the same floats): this runs for every answer.
    counted = False
    total_weight = weighted = 0.0
    for r in results:
        if r.verdict != "skip" or r.error is not None:
            counted = True
            total_weight += r.weight
            weighted += r.score * r.weight
    if not counted:
        return 0.0, "skip"
    score = weighted / total_weight if total_weight > 0 else 0.0
    score = min(1.0, max(0.0, score))
    for result in results:  # AgentV checks skipped graders too: a required one that skipped scored 0
        if result.required and not meets(result.score, _required_bar(result, threshold)):
            score = 0.0
            break
    return score, "pass" if meets(score, threshold) else "fail"


def three_way_verdict(score: float) -> Literal["pass", "borderline", "fail"]:
    """The AgentEvals spec's (and pre-v4.2 AgentV's) cut: pass >= 0.8, borderline >= 0.6, else fail."""
    if meets(score, 0.8):
        return "pass"
    if meets(score, 0.6):
        return "borderline"
    return "fail"


def _confidence_lower_bound(scores: list[float]) -> tuple[float, float, float, float]:
    """(mean, stddev, lower, upper) of a 95% t-interval on `scores`, bounds clamped to 0..1."""
    mean = _js_mean(scores)
    if len(scores) < 2:
        return mean, 0.0, mean, mean
    stddev = _js_stdev(scores, mean)
    t = t_critical_95(len(scores) - 1)  # AgentV's table for df = 1..30, 1.96 beyond
    half = t * stddev / math.sqrt(len(scores))
    return mean, stddev, max(0.0, mean - half), min(1.0, mean + half)


def _sum_usage(attempts: Sequence[TestResult]) -> TokenUsage | None:
    usages = [a.token_usage for a in attempts if a.token_usage is not None]
    if not usages:
        return None
    return TokenUsage(input=sum(u.input for u in usages), output=sum(u.output for u in usages))


def aggregate_attempts(attempts: list[TestResult], strategy: RepeatStrategy) -> TestResult:
    """One result from repeated attempts of one test x target.

    - `pass_at_k`: the best attempt (highest score) stands; passes if any attempt passed.
    - `pass_all`: passes only if every attempt passed; score = the lowest attempt score.
    - `mean`: score = mean of attempt scores, verdict against the threshold.
    - `confidence_interval`: score = lower bound of the 95% t-interval (clamped 0..1).

    The row shows the best attempt's graders (AgentV). Attempts that errored are ignored for the score
    unless all errored (-> execution_error). Unlike AgentV, `execution_status` follows the aggregated
    verdict (AgentV says `ok` when any attempt was ok, even if the mean is below the threshold).
    `aggregation` and `trials` are filled; cost and tokens are summed over attempts.
    """
    if not attempts:
        raise ValueError("aggregate_attempts needs at least one attempt")
    trials = [msgspec.structs.replace(a, trials=[]) for a in attempts]
    scored = [a for a in trials if a.execution_status != "execution_error"]
    threshold = attempts[0].threshold
    scores = [a.score for a in scored]
    passed_attempts = sum(1 for a in scored if a.verdict == "pass")
    summary = AttemptSummary(
        strategy=strategy, passed_attempts=passed_attempts, total_attempts=len(attempts), scores=scores
    )
    costs = [a.cost_usd for a in attempts if a.cost_usd is not None]
    durations = [a.duration_ms for a in attempts if a.duration_ms is not None]
    totals = {
        "token_usage": _sum_usage(attempts),
        "cost_usd": sum(costs) if costs else None,
        "duration_ms": sum(durations) if durations else None,
        "trials": trials,
        "attempt": None,
    }
    if not scored:
        base = trials[-1]
        return msgspec.structs.replace(base, score=0.0, verdict="fail", aggregation=summary, **totals)

    # AgentV reports the graders of the best attempt (the first with the highest score).
    best = max(scored, key=lambda a: a.score)
    verdict: Verdict
    if strategy == "pass_all":
        base = min(scored, key=lambda a: a.score)
        score = base.score
        verdict = "pass" if passed_attempts == len(attempts) else "fail"
    elif strategy == "mean":
        base = best
        score = _js_mean(scores)
        summary.mean = score
        summary.stddev = _js_stdev(scores, score) if len(scores) > 1 else 0.0
        verdict = "pass" if meets(score, threshold) else "fail"
    elif strategy == "confidence_interval":
        base = best
        mean, stddev, lower, upper = _confidence_lower_bound(scores)
        summary.mean, summary.stddev, summary.ci95_lower, summary.ci95_upper = mean, stddev, lower, upper
        score = lower
        verdict = "pass" if meets(score, threshold) else "fail"
    else:
        assert_type(strategy, Literal["pass_at_k"])  # mypy: a new strategy needs its own branch
        base = max(scored, key=lambda a: (a.verdict == "pass", a.score))
        score = base.score
        verdict = "pass" if passed_attempts > 0 else "fail"
    status = "ok" if verdict == "pass" else "quality_failure"
    return msgspec.structs.replace(
        base, score=score, verdict=verdict, execution_status=status, aggregation=summary, **totals
    )
