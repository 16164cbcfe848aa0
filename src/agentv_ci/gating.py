"""Gates: thresholds, pass rates, mean scores, errors and baseline regressions -> `GateDecision`.

A missed gate is a value, not an exception. Exit codes (`errors.ExitCode`; docs/gates.md):

- **1 (gate failed)** when any *quality* gate fails:
  - a test fails its threshold (default on; see `fail_on_test_failure`),
  - a suite's or the whole run's pass rate is below `min_pass_rate`,
  - a suite's or the whole run's mean score is below `min_mean_score`,
  - against a baseline, a test regressed/broke (compare.py: with repeats, significantly by Fisher
    exact on the attempts' pass counts, corrected over the run's family of comparisons; with one
    attempt a side, by the verdicts' word) and fell by more than `max_regression`, or a suite's
    mean score (>= 2 matched tests) fell by more than `max_regression` and significantly (the paired
    sign-flip test, the test as the unit, in the same family). With repeats an unchanged agent is
    blocked in at most 5% of runs at any suite size (bench/noise.py). A test whose definition
    changed (`changed` in compare), or that was produced otherwise (`incomparable`: another judge or
    target model, another grader plugin version), is never a regression, and is left out of the
    suite deltas.
- **3 (inconclusive)** when no quality gate failed but the run cannot be called green:
  - nothing conclusive ran (no results, every test errored or was not run),
  - execution errors occurred and `fail_on_error` is on (the default),
  - the run stopped at its budget or ended over it ("budget reached: $X of $Y", with or without
    tests left unrun: a run that broke its spending limit is not green either),
  - tests were not run (the budget ran out, or a results file holds `not_run` rows), and in
    particular planned tests have no finished row (the run was interrupted or killed, or a shard
    is missing): "incomplete: N of M tests did not run" (the run's plan, results/plan_file.py).
- **0** otherwise.

A dry run (`summary.dry_run`: placeholder answers) reports the quality gates as notes and applies
only the inconclusive ones: it fails on execution errors and tests that did not run, never on scores.

Precedence: a quality failure (1) wins over inconclusive (3): a test that is known to be red is
the more actionable fact. Every reason is listed either way.

Pass rate and mean score are computed over conclusive tests (passed + failed); errors are gated by
`fail_on_error`, never silently counted as passes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from msgspec.structs import replace

from agentv_ci.compare import NOISE_FLOOR, Comparison, compare_runs, incomparable_reasons
from agentv_ci.errors import ExitCode, UsageError
from agentv_ci.model.estimate_text import budget_reached, usd
from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.model.waivers import Waiver, WaiverBook
from agentv_ci.results.gc_pause import paused_gc
from agentv_ci.results.tally import NAMED, FirstFew, tally_of
from agentv_ci.results.totals import Totals

__all__ = [
    "GateDecision",
    "GateOptions",
    "WaivedTest",
    "cost_gate",
    "decide",
    "regression_reasons",
    "rejudge",
]


@dataclass(frozen=True)
class GateOptions:
    """Gate settings (CLI flag in brackets).

    - `threshold` [--threshold X]: per-test pass bar overriding each test's own threshold (the eval
      file's `experiment.threshold`, carried as `TestResult.threshold`). None: keep the verdicts.
    - `min_pass_rate` [--min-pass-rate X]: minimum passed/(passed+failed), per suite and overall.
    - `min_mean_score` [--min-mean-score X]: minimum mean score of conclusive tests, per suite and overall.
    - `max_regression` [--max-regression X]: largest score drop tolerated vs the baseline (see module
      doc). None: baseline deltas are reported, not gated.
    - `fail_on_error` [--fail-on-error/--no-fail-on-error]: execution errors make the run inconclusive (3).
    - `max_cost_usd` [--max-cost-usd USD]: the most the run may have cost (targets and grader models;
      summary.json `spent_usd`, else the rows' costs). Over it: exit 1; unknown (answers with no
      price, no cost recorded) while not over it: inconclusive (3).
    - `fail_on_test_failure`: any failing test fails the run. None (default) means "yes, unless
      `min_pass_rate` is set" (then the pass-rate gate decides how many failures are tolerated).
    - `waivers` [--history RUN, .agentv/quarantine.yaml]: failing or regressed tests that history
      labels flaky, or that are quarantined, are notes rather than gate failures (model/waivers.py).
      Pass rates and mean scores still count them: a waiver hides no number.
    """

    threshold: float | None = None
    min_pass_rate: float | None = None
    min_mean_score: float | None = None
    max_regression: float | None = None
    fail_on_error: bool = True
    fail_on_test_failure: bool | None = None
    max_cost_usd: float | None = None
    waivers: WaiverBook | None = None


class WaivedTest(NamedTuple):
    """A failing (or regressed) test a waiver kept from blocking, for the reports."""

    suite: str
    test_id: str
    target: str
    waiver: Waiver

    @property
    def label(self) -> str:
        return f"{self.suite}/{self.test_id} [{self.target}]"


@dataclass
class GateDecision:
    """The outcome of the gates: `passed`, the process `exit_code`, and one reason per failed gate."""

    passed: bool
    exit_code: ExitCode
    reasons: list[str] = field(default_factory=list)
    totals: Totals | None = None
    notes: list[str] = field(default_factory=list)  # facts that did not fail a gate (possible regressions)
    comparison: Comparison | None = None  # the baseline diff the gates used (reports show the same one)
    dry_run: bool = False  # placeholder answers: scores were reported, not gated
    waived: list[WaivedTest] = field(default_factory=list)  # flaky or quarantined failures: notes

    @property
    def label(self) -> str:
        """`PASSED`, `FAILED` or `INCONCLUSIVE` (from the exit code)."""
        return {ExitCode.OK: "PASSED", ExitCode.GATE_FAILED: "FAILED"}.get(self.exit_code, "INCONCLUSIVE")

    @property
    def verdict(self) -> str:
        """One line: the `label` with the headline numbers."""
        if self.dry_run:
            return self._dry_run_verdict()
        line = self.label
        if self.totals is not None:
            t = self.totals
            line += f": {t.passed}/{t.tests} tests passed"
            extras = []
            if t.failed:
                extras.append(f"{t.failed} failed")
            if t.errors:
                extras.append(f"{t.errors} errored")
            if t.not_run:
                extras.append(f"{t.not_run} not run")
            if extras:
                line += " (" + ", ".join(extras) + ")"
            if t.mean_score is not None:
                line += f", mean score {t.mean_score:.3f}"
        return line + self._first_reason()

    def _first_reason(self) -> str:
        """` - <the first reason> (+N more)`, or nothing when no gate failed."""
        if not self.reasons:
            return ""
        more = f" (+{len(self.reasons) - 1} more)" if len(self.reasons) > 1 else ""
        return f" - {self.reasons[0]}{more}"

    def _dry_run_verdict(self) -> str:
        """`PASSED (dry run): 13/13 tests ran; scores are placeholders, not gated (...)`."""
        line = f"{self.label} (dry run)"
        if self.totals is not None:
            t = self.totals
            line += f": {t.tests - t.not_run}/{t.tests} tests ran"
            problems = [f"{n} {what}" for n, what in ((t.errors, "errored"), (t.not_run, "not run")) if n]
            if problems:
                line += " (" + ", ".join(problems) + ")"
            line += "; scores are placeholders, not gated"
            if t.mean_score is not None:
                line += f" ({t.passed} would pass, {t.failed} would fail, mean {t.mean_score:.3f})"
        return line + self._first_reason()


def check_gate_flags(max_regression: float | None, has_baseline: bool) -> None:
    """Flag combinations that cannot gate anything are bad input (exit 2), for `run` and `report` alike."""
    if max_regression is not None and not has_baseline:
        raise UsageError(
            "--max-regression needs --baseline",
            hint="pass the baseline run's index.jsonl, or commit <eval>.baseline.jsonl sidecars next to "
            "the eval files (`agentv-ci run --update-baseline` writes them)",
        )


def rejudge(summary: RunSummary, threshold: float | None) -> RunSummary:
    """The summary with every conclusive result re-judged against `threshold` (verdict, status, the
    threshold itself, and the attempts' pass counts), so reports written from a results file agree
    with `--threshold`."""
    if threshold is None:
        return summary

    return replace(summary, results=[rejudge_result(r, threshold) for r in summary.results])


def rejudge_result(result: TestResult, threshold: float) -> TestResult:
    """One result re-judged against `threshold` (see `rejudge`)."""

    if result.execution_status not in ("ok", "quality_failure") or result.verdict == "skip":
        return result
    passed = result.score >= threshold
    trials = [rejudge_result(t, threshold) for t in result.trials]
    agg = result.aggregation
    if trials:
        passes = sum(1 for t in trials if t.verdict == "pass")
        agg = replace(agg, passed_attempts=passes) if agg is not None else None
    elif agg is not None and agg.scores and len(agg.scores) == agg.total_attempts:
        agg = replace(agg, passed_attempts=sum(1 for x in agg.scores if x >= threshold))
    return replace(
        result,
        threshold=threshold,
        verdict="pass" if passed else "fail",
        execution_status="ok" if passed else "quality_failure",
        trials=trials,
        aggregation=agg,
    )


def _names(sample: FirstFew[str]) -> str:
    """The first labels of a sample, `...` when there are more."""
    return ", ".join(sample.items) + (" ..." if sample.count > len(sample.items) else "")


def _rate_gates(groups: list[Totals], options: GateOptions) -> list[str]:
    reasons: list[str] = []
    for totals in groups:
        where = "overall" if totals.name == "overall" else f"suite {totals.name}"
        rate, min_rate = totals.pass_rate, options.min_pass_rate
        if rate is not None and min_rate is not None and rate < min_rate:
            reasons.append(
                f"{where}: pass rate {rate:.1%} ({totals.passed}/{totals.conclusive}) < min {min_rate:.1%}"
            )
        score, min_score = totals.mean_score, options.min_mean_score
        if score is not None and min_score is not None and score < min_score:
            reasons.append(f"{where}: mean score {score:.3f} < min {min_score:.3f}")
    return reasons


def cost_gate(summary: RunSummary, overall: Totals, limit: float) -> tuple[list[str], list[str]]:
    """(gate failures, inconclusive reasons) of `max_cost_usd`: the run's actual cost over `limit`
    fails; a cost not fully known (answers without a price) cannot pass."""

    cost = summary.spent_usd if summary.spent_usd is not None else overall.cost_usd
    if cost is not None and cost > limit:
        return [f"cost {usd(cost)} > max cost {usd(limit)}"], []
    if cost is None:
        return [], [f"max cost {usd(limit)} not checked: the run recorded no cost"]
    if summary.unpriced:
        return [], [
            f"max cost {usd(limit)} not checked: {summary.unpriced} answer(s) came with no price, "
            f"so {usd(cost)} is only a floor"
        ]
    return [], []


def regression_reasons(
    comparison: Comparison, max_regression: float | None, waivers: WaiverBook | None = None
) -> tuple[list[str], list[str]]:
    """(gate failures, notes) from a baseline comparison.

    Fails: tests `regressed`/`broken` (significant after the family correction, or by their single
    samples' word) that fell by more than `max_regression` (`TestComparison.drop`); suites (>= 2
    matched tests) whose mean score fell by more than `max_regression` and the noise floor (0.01),
    with a corrected p-value below alpha.
    Notes: every other worse-looking test (incl. `possible regression`), and one line for the tests
    whose definition changed (`changed`: never gated, whatever their scores did). None: notes only.
    """
    reasons: list[str] = []
    notes: list[str] = []
    limit = max_regression
    for row in comparison.tests:
        if row.status in ("regressed", "broken") and limit is not None and row.drop > limit:
            waiver = waivers.lookup(row.suite, row.test_id, row.target) if waivers else None
            line = f"{row.label}: {row.status} vs baseline ({row.describe()})"
            if waiver is not None and not waiver.blocks:
                notes.append(f"{line}; not blocking, {waiver.text}")
            else:
                reasons.append(line + (f"; {waiver.text}" if waiver is not None else ""))
        elif row.status in ("regressed", "broken", "possible regression"):
            notes.append(f"{row.label}: {row.status} vs baseline ({row.describe()})")
    changed = [row.label for row in comparison.tests if row.status == "changed"]
    if changed:
        names = ", ".join(changed[:5]) + (" ..." if len(changed) > 5 else "")
        notes.append(f"{len(changed)} test(s) changed definition since the baseline, not compared: {names}")
    incomparable = [row for row in comparison.tests if row.status == "incomparable"]
    if incomparable:  # produced otherwise (judge, model, plugin version): no score move says anything
        names = ", ".join(row.label for row in incomparable[:5]) + (" ..." if len(incomparable) > 5 else "")
        why = incomparable_reasons(incomparable)
        count = f"{len(incomparable)} test(s)"
        notes.append(f"{count} incomparable with the baseline ({why}), not compared: {names}")
    for suite in comparison.suites:
        # one matched test: the test-level verdict above already decided (with its own noise model)
        if limit is None or suite.mean_delta is None or suite.p_value is None:
            continue
        if -suite.mean_delta > max(limit, NOISE_FLOOR) and suite.p_value < comparison.alpha:
            interval = f", CI [{suite.ci[0]:+.3f}, {suite.ci[1]:+.3f}]" if suite.ci else ""
            reasons.append(
                f"suite {suite.suite}: mean score fell {-suite.mean_delta:.3f} vs baseline "
                f"(se {suite.stderr or 0:.3f}{interval}, p{_p_text(suite.p_value)} corrected) "
                f"> max regression {limit:.3f}"
            )
    return reasons, notes


def _p_text(p: float) -> str:
    return f"={p:.3g}" if p >= 0.001 else "<0.001"


def decide(summary: RunSummary, options: GateOptions, baseline: RunSummary | None = None) -> GateDecision:
    """Apply every gate to `summary` (and `baseline` when given) and pick the exit code."""

    with paused_gc():
        return _decide(summary, options, baseline)


def _incomplete(summary: RunSummary) -> str:
    # lazy: `results.plan_check` loaded only when `_incomplete` runs
    from agentv_ci.results.plan_check import incomplete_reason

    return incomplete_reason(summary, summary.not_run)


def _decide(summary: RunSummary, options: GateOptions, baseline: RunSummary | None) -> GateDecision:
    results = summary.results
    tally = tally_of(results, options.threshold)  # one pass (none for a run's results: it kept its own)
    overall = tally.overall()
    suites = tally.by_suite()
    quality: list[str] = []
    inconclusive: list[str] = []
    notes: list[str] = []

    fail_on_test = options.fail_on_test_failure
    if fail_on_test is None:
        fail_on_test = options.min_pass_rate is None
    failing = tally.failing
    waived: list[WaivedTest] = []
    if options.waivers is not None and options.waivers.tests and failing.count:
        failing, waived, expired = _waive(results, options)
        notes.extend(f"{w.label}: failed; not blocking, {w.waiver.text}" for w in waived)
        if fail_on_test:
            quality.extend(expired)
    if options.waivers is not None:
        notes.extend(options.waivers.notes)
    if fail_on_test and failing.count:
        quality.append(f"{failing.count} test(s) below threshold: {_names(failing)}")
    quality.extend(_rate_gates([*suites, overall] if len(suites) > 1 else [overall], options))
    comparison = None
    if baseline is not None:
        # both sides judged by the same bar: a --threshold change alone is not a fix or a break
        base = rejudge(baseline, options.threshold)
        comparison = compare_runs(base.results, rejudge(summary, options.threshold).results)
        failed, regression_notes = regression_reasons(comparison, options.max_regression, options.waivers)
        quality.extend(failed)
        notes.extend(regression_notes)
        if baseline.planned is not None and baseline.not_run:  # killed, interrupted, a shard missing
            gap = f"baseline {_incomplete(baseline)} in it; a regression among them cannot be ruled out"
            (inconclusive if options.max_regression is not None else notes).append(gap)

    if options.max_cost_usd is not None and not summary.dry_run:
        over, unknown = cost_gate(summary, overall, options.max_cost_usd)
        quality.extend(over)
        inconclusive.extend(unknown)
    errored = tally.errored
    not_run = max(overall.not_run, summary.not_run)
    if tally.needs_secret.count:  # a fork's PR: never green, and the headline says why and what to do
        inconclusive.append(tally.needs_secret.reason())
    unexplained = not_run - tally.needs_secret.count  # not run for no reason the rows give
    incomplete = summary.planned is not None and not summary.budget_exhausted
    incomplete = incomplete and (unexplained > 0 or bool(summary.missing_shards))  # a shard without a record
    if incomplete:  # planned tests without a finished row: killed, interrupted, a shard missing
        # lazy: `results.plan_check` loaded only when `_decide` runs
        from agentv_ci.results.plan_check import incomplete_reason

        inconclusive.append(incomplete_reason(summary, unexplained))
        unlisted = not_run - overall.not_run  # a missing shard's tests: planned, no row to count
        if unlisted > 0:
            overall = replace(overall, tests=overall.tests + unlisted, not_run=not_run)
    if overall.conclusive == 0:
        inconclusive.append(
            "nothing conclusive ran: "
            + (f"{errored.count} errored, {not_run} not run" if tally.results or not_run else "no results")
        )
    else:
        if errored.count and options.fail_on_error:
            inconclusive.append(f"{errored.count} test(s) had execution errors: {_names(errored)}")
        if summary.budget_exhausted and (not_run or summary.budget_usd is not None):
            inconclusive.append(budget_reached(summary, not_run))  # stopped at it, or ended over it
        elif unexplained > 0 and not incomplete:  # e.g. `not_run` rows in results without a plan record
            names = _names(tally.skipped)
            inconclusive.append(f"{unexplained} test(s) did not run" + (f": {names}" if names else ""))
    if summary.dry_run:
        notes.append("dry run: answers are placeholders, so scores say nothing about quality")
        if quality:  # a dry run checks the wiring: only errors (and tests that did not run) fail it
            more = f" (+{len(quality) - 1} more)" if len(quality) > 1 else ""
            notes.append(f"dry run: quality gates not applied: {quality[0]}{more}")
            quality = []
    if errored.count and not options.fail_on_error:
        notes.append(f"{errored.count} execution error(s) ignored (--no-fail-on-error)")

    if quality:
        code = ExitCode.GATE_FAILED
    elif inconclusive:
        code = ExitCode.INCONCLUSIVE
    else:
        code = ExitCode.OK
    return GateDecision(
        passed=code == ExitCode.OK,
        exit_code=code,
        reasons=quality + inconclusive,
        totals=overall,
        notes=notes,
        comparison=comparison,
        dry_run=summary.dry_run,
        waived=waived,
    )


def _waive(
    results: Sequence[TestResult], options: GateOptions
) -> tuple[FirstFew[str], list[WaivedTest], list[str]]:
    """Split the failing tests: (those that block, those a waiver keeps from blocking, one reason per
    expired quarantine entry naming its owner and why)."""
    book = options.waivers
    assert book is not None
    blocking: FirstFew[str] = FirstFew(NAMED)
    waived: list[WaivedTest] = []
    expired: list[str] = []
    for result in results:
        judged = rejudge_result(result, options.threshold) if options.threshold is not None else result
        if judged.execution_status != "quality_failure" or judged.verdict != "fail":
            continue
        label = f"{result.suite}/{result.test_id} [{result.target}]"
        waiver = book.lookup(result.suite, result.test_id, result.target)
        if waiver is None:
            blocking.add(label)
        elif waiver.blocks:
            blocking.add(label)
            expired.append(f"{label}: failed, {waiver.text}")
        else:
            waived.append(WaivedTest(result.suite, result.test_id, result.target, waiver))
    return blocking, waived, expired
