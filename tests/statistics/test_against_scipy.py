"""The statistics module against scipy (a test-only dependency): the gate's numbers are the textbook ones."""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

import pytest

from agentv_ci.statistics.descriptive import mean, standard_error, stdev
from agentv_ci.statistics.fisher import (
    fisher_exact_greater,
    fisher_exact_less,
    min_p_less,
)
from agentv_ci.statistics.paired import paired_delta
from agentv_ci.statistics.proportions import (
    clopper_pearson,
    newcombe_difference,
    wilson_interval,
)
from agentv_ci.statistics.student_t import t_cdf, t_critical_95, t_quantile


@pytest.fixture(scope="module")
def scipy_stats() -> Any:
    """scipy.stats, imported when a test here runs: at module level every xdist worker paid ~1.5 s to
    import it while collecting, used or not."""
    return pytest.importorskip("scipy.stats")


COUNTS = [(1, 1), (5, 5), (10, 10), (20, 20), (1, 20), (7, 3)]


@pytest.mark.parametrize(("base_n", "head_n"), COUNTS)
def test_fisher_matches_scipy_on_every_table(scipy_stats: Any, base_n: int, head_n: int) -> None:
    for bp, hp in itertools.product(range(base_n + 1), range(head_n + 1)):
        table = [[bp, base_n - bp], [hp, head_n - hp]]
        # "head passes less often": the base row's odds of passing are greater
        expected_less = scipy_stats.fisher_exact(table, alternative="greater").pvalue
        expected_greater = scipy_stats.fisher_exact(table, alternative="less").pvalue
        assert fisher_exact_less(bp, base_n, hp, head_n) == pytest.approx(expected_less, rel=1e-9, abs=1e-12)
        assert fisher_exact_greater(bp, base_n, hp, head_n) == pytest.approx(
            expected_greater, rel=1e-9, abs=1e-12
        )


@pytest.mark.parametrize(("base_n", "head_n"), COUNTS)
def test_min_p_is_the_smallest_p_value_the_margins_allow(base_n: int, head_n: int) -> None:
    for total in range(base_n + head_n + 1):
        tables = [(bp, total - bp) for bp in range(base_n + 1) if 0 <= total - bp <= head_n]
        smallest = min(fisher_exact_less(bp, base_n, hp, head_n) for bp, hp in tables)
        for bp, hp in tables:
            assert min_p_less(bp, base_n, hp, head_n) == pytest.approx(smallest, rel=1e-12)


def test_a_single_sample_on_each_side_can_never_be_significant() -> None:
    assert min_p_less(1, 1, 0, 1) == 0.5
    assert min_p_less(1, 1, 1, 1) == 1.0


@pytest.mark.parametrize("df", [1, 2, 3, 5, 9, 29, 30, 31, 99, 999, 1e5])
def test_t_distribution_matches_scipy(scipy_stats: Any, df: float) -> None:
    for t in (-40.0, -6.5, -2.0, -1.0, -0.1, 0.0, 0.3, 1.7, 3.0, 12.0):
        assert t_cdf(t, df) == pytest.approx(scipy_stats.t.cdf(t, df), rel=1e-9, abs=1e-14)
    for p in (1e-6, 0.001, 0.025, 0.2, 0.5, 0.9, 0.975, 0.999):
        assert t_quantile(p, df) == pytest.approx(scipy_stats.t.ppf(p, df), rel=1e-7, abs=1e-8)


def test_agentv_table_is_students_t_to_three_places(scipy_stats: Any) -> None:
    for df in range(1, 31):
        assert t_critical_95(df) == pytest.approx(scipy_stats.t.ppf(0.975, df), abs=6e-4)


def test_descriptive_statistics_match_scipy(scipy_stats: Any) -> None:
    values = [0.2, 0.9, 1.0, 0.0, 0.55, 0.75]
    assert mean(values) == pytest.approx(sum(values) / len(values))
    assert stdev(values) == pytest.approx(scipy_stats.tstd(values))
    assert standard_error(values) == pytest.approx(scipy_stats.sem(values))
    assert mean([]) == 0.0 and stdev([1.0]) == 0.0 and standard_error([1.0]) == 0.0


@pytest.mark.parametrize(("passes", "n"), [(0, 1), (1, 1), (0, 5), (3, 5), (20, 20), (14, 20), (1, 1000)])
def test_wilson_interval_matches_scipy(scipy_stats: Any, passes: int, n: int) -> None:
    expected = scipy_stats.binomtest(passes, n).proportion_ci(0.95, method="wilson")
    low, high = wilson_interval(passes, n)
    assert (low, high) == pytest.approx((expected.low, expected.high), abs=1e-9)


def test_newcombe_interval_known_value_and_bounds() -> None:
    # Newcombe (1998), table II, example (a): 56/70 vs 48/80 -> difference 0.2 with [0.0524, 0.3339]
    low, high = newcombe_difference(48, 80, 56, 70)
    assert (low, high) == pytest.approx((0.0524, 0.3339), abs=5e-4)
    for bp, hp in [(20, 0), (0, 20), (20, 20), (0, 0)]:
        low, high = newcombe_difference(bp, 20, hp, 20)
        assert -1.0 <= low <= (hp - bp) / 20 <= high <= 1.0


def test_large_suites_use_the_sign_flip_distribution_and_students_interval(scipy_stats: Any) -> None:
    rng = random.Random(7)
    base = [rng.random() for _ in range(60)]
    head = [min(1.0, max(0.0, b + rng.gauss(-0.05, 0.2))) for b in base]
    deltas = [h - b for h, b in zip(head, base, strict=True)]
    paired = paired_delta(deltas)
    assert paired is not None and paired.floor == 0.0
    step = min(abs(d) for d in deltas if d)  # the continuity correction
    z = (sum(deltas) + step) / math.sqrt(sum(d * d for d in deltas))
    assert paired.p_less == pytest.approx(scipy_stats.norm.cdf(z), rel=1e-9)
    # ... which is the randomization test's own distribution, sampled by scipy
    sampled = scipy_stats.permutation_test(
        (head, base),
        lambda x, y: sum(x) - sum(y),
        permutation_type="samples",
        alternative="less",
        n_resamples=20_000,
        random_state=3,
    ).pvalue
    assert paired.p_less == pytest.approx(sampled, abs=0.01)
    ci = scipy_stats.ttest_rel(head, base).confidence_interval(0.95)
    assert paired.interval(0.95) == pytest.approx((ci.low, ci.high), rel=1e-7)
    assert paired_delta([0.1]) is None
    same = paired_delta([-0.5, -0.5, -0.5])
    assert same is not None and same.p_less == 0.125  # exact: 1 of the 8 sign patterns
    many = paired_delta([-0.5] * 30)
    assert many is not None and many.p_less < 1e-6 and not math.isnan(many.mean)


def test_small_suites_use_the_exact_sign_flip_test(scipy_stats: Any) -> None:
    deltas = [-1.0, -1.0, 0.0, -0.5, 1.0, -0.25, 0.0, -1.0]
    moved = [d for d in deltas if d]
    observed = sum(deltas)
    patterns = list(itertools.product((1, -1), repeat=len(moved)))
    brute = sum(
        1
        for signs in patterns
        if sum(s * abs(d) for s, d in zip(signs, moved, strict=True)) <= observed + 1e-12
    )
    paired = paired_delta(deltas)
    assert paired is not None
    assert paired.p_less == pytest.approx(brute / len(patterns))
    assert paired.floor == 0.5 ** len(moved)
    # scipy's randomization test agrees (paired samples: every sign pattern enumerated)
    head, base = [max(d, 0.0) for d in deltas], [max(-d, 0.0) for d in deltas]
    expected = scipy_stats.permutation_test(
        (head, base),
        lambda x, y: sum(x) - sum(y),
        permutation_type="samples",
        alternative="less",
        n_resamples=10**6,
    ).pvalue
    assert paired.p_less == pytest.approx(expected)


@pytest.mark.parametrize(("passes", "n"), [(0, 1), (1, 1), (0, 5), (3, 5), (20, 20), (14, 20), (1, 1000)])
def test_clopper_pearson_matches_scipy(scipy_stats: Any, passes: int, n: int) -> None:
    for confidence in (0.9, 0.95, 0.999):
        expected = scipy_stats.binomtest(passes, n).proportion_ci(confidence, method="exact")
        assert clopper_pearson(passes, n, confidence) == pytest.approx(
            (expected.low, expected.high), abs=1e-9
        )


def test_a_drop_the_exact_test_calls_significant_has_an_interval_below_zero() -> None:
    """Every table up to 12 attempts a side, at three family sizes: where the one-sided Fisher test
    rejects at alpha/M, the exact-component Newcombe interval at 1 - 2·alpha/M lies below zero (the
    reverse can fail at the edge: the interval is an approximation, the verdict follows the test)."""
    for n, m, family in itertools.product(range(1, 13), range(1, 13), (1, 3, 10)):
        cut = 0.05 / family
        for bp, hp in itertools.product(range(n + 1), range(m + 1)):
            if fisher_exact_less(bp, n, hp, m) < cut:
                assert newcombe_difference(bp, n, hp, m, 1 - 2 * cut, exact=True)[1] < 0, (bp, n, hp, m)
