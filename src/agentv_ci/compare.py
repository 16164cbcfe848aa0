"""Baseline diff with verdicts at a stated error rate (docs/gates.md, "Noise").

Tests are matched by suite + test id + target. Per test: base score, head score, delta and a status:

- `new` / `removed`: only on one side; `not comparable`: either side errored or did not run.
- `changed`: both rows carry a definition fingerprint (running/fingerprints.py) and they differ: the
  test's input, graders, threshold or target changed, so a score move says nothing about the answers.
  Never a regression or an improvement, and left out of the suite deltas. Rows without fingerprints
  (older runs, AgentV's) compare as below.
- `incomparable`: both rows record what produced them (model/provenance.py) and it differs: another
  target model or parameters, another judge model or prompt, another grader plugin version. Listed
  with the reasons ("judge model gpt-4o -> gpt-4.1"), never a regression nor `unchanged`, left out of
  the suite deltas and of the corrected family. A test whose fingerprint changed too is `changed`
  (its definition moved: the reason is added to its detail). Rows without provenance compare as below.
- Otherwise the comparison is of the attempts' verdicts: pass counts base -> head (one attempt a
  side without repeats). A one-sided Fisher exact test gives the p-value, and the p-values of every
  test and suite of the run are corrected as one family (statistics/family.py: Tarone's trimmed
  family, Holm's step-down) so that an unchanged agent has at most `ALPHA` (5%) chance of any
  significant comparison, at any suite size. The interval shown is Newcombe's for the difference
  of the pass rates at the same corrected level: counts, p-value and interval are one comparison.
  Significant: `broken` (the test's verdict went pass -> fail), `fixed` (fail -> pass),
  `regressed` / `improved` (attempts' pass rate moved, verdict kept). Not significant: `possible
  regression` for a drop (or a pass -> fail flip), `possible improvement` for a rise, `unchanged`
  otherwise.
- One attempt on each side: a test has no noise estimate and no p-value could ever be significant
  (its smallest is 0.5), so the verdicts are taken at their word, outside the family: a flip is
  `broken` / `fixed` (one by less than `NOISE_FLOOR`, e.g. 0.8 -> 0.7999 across a 0.8 bar, only
  `possible ...`); a score move of at least `SINGLE_SAMPLE_TOLERANCE` (0.1, AgentV compare's default)
  is `regressed` / `improved`, a smaller drop `possible regression`. Keeping a single-sample red is
  the lesser error; the ways to a stated error rate are repeats, `--adaptive-repeats` and `--history`.
- A score move below `NOISE_FLOOR` (0.01) is never flagged.

Per suite (and overall): the mean of the per-test deltas over the matched tests (`changed`,
`incomparable`, `new`, `removed` and `not comparable` tests left out), paired with the test as the
unit (statistics/paired.py), its standard error, a one-sided t-test in the same corrected family
and its interval at the family's level; the reports say over how many of the suite's tests it was
taken and list the ones left out (suite_deltas.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import msgspec

from agentv_ci.model.provenance import differences
from agentv_ci.model.result import TestResult
from agentv_ci.results.gc_pause import paused_gc
from agentv_ci.results.results_file import aggregate_attempts
from agentv_ci.statistics.family import ALPHA, control_family
from agentv_ci.statistics.fisher import fisher_exact_greater, fisher_exact_less, min_p_greater
from agentv_ci.statistics.paired import PairedDelta, paired_delta
from agentv_ci.statistics.proportions import newcombe_difference
from agentv_ci.statistics.regressions import PassCounts, regression_family

__all__ = [
    "ALPHA",
    "NOISE_FLOOR",
    "SINGLE_SAMPLE_TOLERANCE",
    "Comparison",
    "SuiteComparison",
    "TestComparison",
    "compare_runs",
]

NOISE_FLOOR = 0.01
SINGLE_SAMPLE_TOLERANCE = 0.1

Status = Literal[
    "improved",
    "regressed",
    "possible regression",
    "possible improvement",
    "fixed",
    "broken",
    "new",
    "removed",
    "unchanged",
    "not comparable",
    "changed",
    "incomparable",
]
_LEFT_OUT = ("changed", "incomparable")  # not the same test, or not produced alike: no delta
_WORSE = ("broken", "regressed", "possible regression")


class TestComparison(msgspec.Struct, omit_defaults=True):
    """One matched (or unmatched) test x target."""

    __test__ = False  # not a pytest class

    suite: str
    test_id: str
    target: str
    status: Status
    base_score: float | None = None
    head_score: float | None = None
    delta: float | None = None
    base_passes: int | None = None
    base_attempts: int | None = None
    head_passes: int | None = None
    head_attempts: int | None = None
    # One-sided Fisher exact on the pass counts, in the direction of the change, corrected for the
    # run's family of comparisons (`Comparison.family_size`); `p_uncorrected` is the test's own.
    p_value: float | None = None
    p_uncorrected: float | None = None
    # Newcombe interval of head pass rate - base pass rate at the family's corrected level.
    ci95: tuple[float, float] | None = None
    base_fingerprint: str | None = None  # set on `changed` rows: the two definition fingerprints
    head_fingerprint: str | None = None
    why_incomparable: list[str] = []  # set on `incomparable` rows: what produced the two differently

    @property
    def label(self) -> str:
        return f"{self.suite}/{self.test_id} [{self.target}]"

    @property
    def single_sample(self) -> bool:
        """One attempt on each side: judged by `_single_sample`, outside the corrected family."""
        return self.base_attempts == 1 and self.head_attempts == 1

    @property
    def drop(self) -> float:
        """How far the test fell, in what its verdict compared: the attempts' pass rate, or the
        score for a single sample on each side (0 when it rose)."""
        rate = None if self.single_sample else self.rate_delta
        return max(0.0, -(rate if rate is not None else (self.delta or 0.0)))

    @property
    def rate_delta(self) -> float | None:
        """Head pass rate - base pass rate over the attempts (what the test-level verdict compares)."""
        if not (self.base_attempts and self.head_attempts):
            return None
        return (self.head_passes or 0) / self.head_attempts - (self.base_passes or 0) / self.base_attempts

    def describe(self) -> str:
        why = "; ".join(self.why_incomparable)
        if self.status == "changed":
            parts = ["definition changed" + (f" ({why})" if why else "")]
        else:
            parts = ["incomparable: " + why] if why else []
        if self.base_score is not None and self.head_score is not None:
            base, head = self.base_score, self.head_score
            hidden = base != head and f"{base:.3f}" == f"{head:.3f}"
            digits = 4 if hidden else 3  # show a 0.0001 change instead of "0.800 -> 0.800"
            parts.append(f"{base:.{digits}f} -> {head:.{digits}f}")
        if (self.base_attempts or 0) > 1 or (self.head_attempts or 0) > 1:
            parts.append(
                f"passes {self.base_passes}/{self.base_attempts} -> {self.head_passes}/{self.head_attempts}"
            )
        if self.p_value is not None:
            shown = f"={self.p_value:.3g}" if self.p_value >= 0.001 else "<0.001"
            parts.append(f"p{shown} corrected")
        if self.ci95 is not None:
            parts.append(f"pass-rate Δ CI [{self.ci95[0]:+.2f}, {self.ci95[1]:+.2f}]")
        return ", ".join(parts)


class SuiteComparison(msgspec.Struct, omit_defaults=True):
    suite: str
    matched: int
    mean_delta: float | None = None
    stderr: float | None = None
    counts: dict[str, int] = {}
    # the paired t-test of the mean delta (>= 2 matched tests), corrected in the run's family, and
    # the interval of the mean delta at the family's level
    p_value: float | None = None
    ci: tuple[float, float] | None = None


class Comparison(msgspec.Struct):
    tests: list[TestComparison]
    suites: list[SuiteComparison]
    overall: SuiteComparison
    family_size: int = 0  # comparisons that could reach significance (statistics/family.py)
    alpha: float = ALPHA

    @property
    def regressions(self) -> list[TestComparison]:
        """Significant regressions (`broken`, `regressed`)."""
        return [t for t in self.tests if t.status in ("broken", "regressed")]

    @property
    def worse(self) -> list[TestComparison]:
        return [t for t in self.tests if t.status in _WORSE]

    def incomparable_baseline(self) -> str | None:
        """The headline when no matched test could be compared because every one was produced
        otherwise than its baseline row (another judge, model, plugin version); None otherwise."""
        matched = [t for t in self.tests if t.status not in ("new", "removed", "not comparable")]
        if not matched or any(t.status != "incomparable" for t in matched):
            return None
        return (
            f"all {len(matched)} matched tests were produced differently ({incomparable_reasons(matched)}); "
            "no test was compared"
        )

    @property
    def confidence(self) -> float:
        """The two-sided level of the intervals shown: 1 - 2·alpha/M (one-sided alpha/M each side)."""
        return 1.0 - 2.0 * self.alpha / max(self.family_size, 1)


def incomparable_reasons(rows: list[TestComparison]) -> str:
    """The reasons every row shares ("judge model gpt-4o -> gpt-4.1"), else the first row's, marked."""
    shared = [r for r in rows[0].why_incomparable if all(r in t.why_incomparable for t in rows[1:])]
    if shared:
        return "; ".join(shared)
    return "; ".join(rows[0].why_incomparable[:2]) + ", among others"


def _attempts(result: TestResult) -> tuple[int, int, list[float]]:
    """(passes, attempts, conclusive attempt scores) of a result."""
    done = [t for t in result.trials if t.execution_status in ("ok", "quality_failure")]
    if done:
        return sum(1 for t in done if t.verdict == "pass"), len(done), [t.score for t in done]
    agg = result.aggregation
    if agg is not None and agg.total_attempts > 1:  # clamped: a foreign row may claim 5 of 3
        return min(max(agg.passed_attempts, 0), agg.total_attempts), agg.total_attempts, list(agg.scores)
    return (1 if result.verdict == "pass" else 0), 1, [result.score]


def _conclusive(result: TestResult) -> bool:
    return result.execution_status in ("ok", "quality_failure") and result.verdict != "skip"


class _Evidence(msgspec.Struct, frozen=True):
    """The raw tests of one compared row, before the family correction."""

    counts: PassCounts
    p_greater: float
    floor_greater: float
    base_pass: bool
    head_pass: bool

    def raw_p(self, row: TestComparison) -> float:
        """The row's own p-value, in the direction its status was read."""
        return fisher_exact_less(*self.counts) if _down(row) else self.p_greater


def _classify(base: TestResult, head: TestResult) -> tuple[TestComparison, _Evidence | None]:
    row = TestComparison(head.suite, head.test_id, head.target, "unchanged")
    why = differences(base.provenance, head.provenance)
    redefined = bool(base.fingerprint and head.fingerprint and base.fingerprint != head.fingerprint)
    if why or redefined:
        # another test now, or answered / judged by something else: its score move is no regression
        row.status, row.why_incomparable = ("changed" if redefined else "incomparable"), why
        if base.fingerprint != head.fingerprint:
            row.base_fingerprint, row.head_fingerprint = base.fingerprint, head.fingerprint
        row.base_score = base.score if _conclusive(base) else None
        row.head_score = head.score if _conclusive(head) else None
        if row.base_score is not None and row.head_score is not None:
            row.delta = round(row.head_score - row.base_score, 6)
        return row, None
    if not (_conclusive(base) and _conclusive(head)):
        row.status = "not comparable"
        row.base_score = base.score if _conclusive(base) else None
        row.head_score = head.score if _conclusive(head) else None
        return row, None
    bp, bn, _ = _attempts(base)
    hp, hn, _ = _attempts(head)
    row.base_score, row.head_score, row.delta = base.score, head.score, round(head.score - base.score, 6)
    row.base_passes, row.base_attempts, row.head_passes, row.head_attempts = bp, bn, hp, hn
    if bn == 1 and hn == 1:
        _single_sample(row, head.score - base.score, base.verdict == "pass", head.verdict == "pass")
        return row, None
    evidence = _Evidence(
        counts=PassCounts(bp, bn, hp, hn),
        p_greater=fisher_exact_greater(bp, bn, hp, hn),
        floor_greater=min_p_greater(bp, bn, hp, hn),
        base_pass=base.verdict == "pass",
        head_pass=head.verdict == "pass",
    )
    return row, evidence


def _single_sample(row: TestComparison, delta: float, base_pass: bool, head_pass: bool) -> None:
    """One attempt on each side: no noise estimate exists, so no error rate can be stated. The
    verdicts are taken at their word (a red that should be green is the lesser error): a flip is
    `broken` / `fixed`, a score move of `SINGLE_SAMPLE_TOLERANCE` is `regressed` / `improved`. Repeats,
    `--adaptive-repeats` or `--history` move a test onto the statistical path."""
    flip_is_noise = abs(delta) < NOISE_FLOOR  # e.g. 0.8 -> 0.7999 across a 0.8 bar
    if base_pass and not head_pass:
        row.status = "possible regression" if flip_is_noise else "broken"
    elif head_pass and not base_pass:
        row.status = "possible improvement" if flip_is_noise else "fixed"
    elif delta <= -SINGLE_SAMPLE_TOLERANCE:
        row.status = "regressed"
    elif delta < -NOISE_FLOOR:
        row.status = "possible regression"
    elif delta >= SINGLE_SAMPLE_TOLERANCE:
        row.status = "improved"


def _down(row: TestComparison) -> bool:
    """Whether the row is read as a drop: its pass rate fell, or (the same) its score did."""
    rate, delta = row.rate_delta or 0.0, row.delta or 0.0
    return rate < 0 or (rate == 0 and delta < 0)


def _settle(row: TestComparison, evidence: _Evidence, worse: float, better: float, level: float) -> None:
    """Set the status, p-value and interval of a compared row from its corrected p-values."""
    delta = row.delta or 0.0
    rate = row.rate_delta or 0.0
    row.p_value = round(worse if _down(row) else better, 6)
    if row.base_attempts and row.head_attempts and (row.base_attempts > 1 or row.head_attempts > 1):
        low, high = newcombe_difference(
            row.base_passes or 0,
            row.base_attempts,
            row.head_passes or 0,
            row.head_attempts,
            level,
            exact=True,
        )
        row.ci95 = (round(low, 6), round(high, 6))
    if worse < ALPHA and rate < 0:
        row.status = "broken" if evidence.base_pass and not evidence.head_pass else "regressed"
    elif better < ALPHA and rate > 0:
        row.status = "fixed" if evidence.head_pass and not evidence.base_pass else "improved"
    elif (evidence.base_pass and not evidence.head_pass) or rate < 0 or delta < -NOISE_FLOOR:
        row.status = "possible regression"
    elif (evidence.head_pass and not evidence.base_pass) or rate > 0 or delta >= SINGLE_SAMPLE_TOLERANCE:
        row.status = "possible improvement"
    if abs(delta) < NOISE_FLOOR and row.status.startswith("possible") and rate == 0:
        row.status = "unchanged"  # e.g. 0.8 -> 0.7999 with the same passes: not a move at all


def _key(result: TestResult) -> tuple[str, str, str]:
    return (result.suite, result.test_id, result.target)


def _suite_stats(name: str, rows: Iterable[TestComparison]) -> tuple[SuiteComparison, PairedDelta | None]:
    rows = list(rows)
    deltas = [r.delta for r in rows if r.delta is not None and r.status not in _LEFT_OUT]
    paired = paired_delta(deltas)
    stats = SuiteComparison(
        suite=name,
        matched=len(deltas),
        mean_delta=round(sum(deltas) / len(deltas), 6) if deltas else None,
        stderr=round(paired.stderr, 6) if paired is not None else None,
    )
    return stats, paired


def compare_runs(base: Iterable[TestResult], head: Iterable[TestResult]) -> Comparison:
    """Diff two runs (rows of the same test x target are first merged into one with attempts)."""
    with paused_gc():
        return _compare(base, head)


def _compare(base: Iterable[TestResult], head: Iterable[TestResult]) -> Comparison:
    base_map = {_key(r): r for r in aggregate_attempts(base)}
    head_map = {_key(r): r for r in aggregate_attempts(head)}
    tests: list[TestComparison] = []
    compared: list[tuple[TestComparison, _Evidence]] = []
    for key in sorted(base_map.keys() | head_map.keys()):
        b, h = base_map.get(key), head_map.get(key)
        if b is None and h is not None:
            tests.append(TestComparison(*key, status="new", head_score=h.score if _conclusive(h) else None))
        elif h is None and b is not None:
            tests.append(
                TestComparison(*key, status="removed", base_score=b.score if _conclusive(b) else None)
            )
        elif b is not None and h is not None:
            row, evidence = _classify(b, h)
            tests.append(row)
            if evidence is not None:
                compared.append((row, evidence))
    by_suite: dict[str, list[TestComparison]] = {}
    for test in tests:
        by_suite.setdefault(test.suite, []).append(test)
    suites = [_suite_stats(name, by_suite[name]) for name in sorted(by_suite)]
    return _corrected(tests, compared, suites, _suite_stats("overall", tests))


def _corrected(
    tests: list[TestComparison],
    compared: list[tuple[TestComparison, _Evidence]],
    suites: list[tuple[SuiteComparison, PairedDelta | None]],
    overall: tuple[SuiteComparison, PairedDelta | None],
) -> Comparison:
    """One family for "worse": every compared test and every suite's mean delta (regressions.py);
    another for "better" (improvements never block, but are named at the same error rate)."""
    tested = [(s, paired) for s, paired in suites if paired is not None]
    worse = regression_family([e.counts for _, e in compared], [paired for _, paired in tested])
    better = control_family([e.p_greater for _, e in compared], [e.floor_greater for _, e in compared])
    comparison = Comparison(
        tests=tests, suites=[s for s, _ in suites], overall=overall[0], family_size=worse.size
    )
    level = comparison.confidence
    for index, (row, evidence) in enumerate(compared):
        _settle(row, evidence, worse.adjusted[index], better.adjusted[index], level)
        row.p_uncorrected = round(evidence.raw_p(row), 6)
    for offset, (suite, _) in enumerate(tested):
        suite.p_value = round(worse.adjusted[len(compared) + offset], 6)
    by_suite: dict[str, list[TestComparison]] = {}
    for test in tests:
        by_suite.setdefault(test.suite, []).append(test)
    for suite, paired in [*suites, overall]:
        rows = tests if suite is overall[0] else by_suite.get(suite.suite, [])
        suite.counts = _status_counts(rows)  # after the statuses were settled
        if paired is not None:
            low, high = paired.interval(level)
            suite.ci = (round(low, 6), round(high, 6))
    return comparison


def _status_counts(rows: Iterable[TestComparison]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.status] = counts.get(r.status, 0) + 1
    return dict(sorted(counts.items()))
