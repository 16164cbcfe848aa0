from __future__ import annotations

from agentv_ci.errors import ExitCode
from agentv_ci.gating import GateOptions, decide
from agentv_ci.model.result import AttemptSummary, RunSummary, TestResult


def ok(test_id: str, score: float = 1.0, suite: str = "s", **kw: object) -> TestResult:
    return TestResult(test_id, suite, "m", score, "ok", verdict="pass", **kw)  # type: ignore[arg-type]


def bad(test_id: str, score: float = 0.2, suite: str = "s", **kw: object) -> TestResult:
    return TestResult(test_id, suite, "m", score, "quality_failure", verdict="fail", **kw)  # type: ignore[arg-type]


def err(test_id: str, suite: str = "s") -> TestResult:
    return TestResult(test_id, suite, "m", 0.0, "execution_error", error="boom")


def skipped(test_id: str) -> TestResult:
    return TestResult(test_id, "s", "m", 0.0, "not_run", verdict="skip")


def run(*rows: TestResult, **facts: object) -> RunSummary:
    return RunSummary(list(rows), **facts)  # type: ignore[arg-type]


def test_all_passing_is_green() -> None:
    decision = decide(run(ok("a"), ok("b")), GateOptions())
    assert (decision.passed, decision.exit_code, decision.reasons) == (True, ExitCode.OK, [])
    assert decision.verdict == "PASSED: 2/2 tests passed, mean score 1.000"


def test_default_fails_when_any_test_fails_its_threshold() -> None:
    decision = decide(run(ok("a"), bad("b")), GateOptions())
    assert decision.exit_code == ExitCode.GATE_FAILED and not decision.passed
    assert decision.reasons == ["1 test(s) below threshold: s/b [m]"]
    assert decision.verdict.startswith("FAILED: 1/2 tests passed (1 failed)")


def test_eval_file_threshold_is_respected_through_the_verdict() -> None:
    # experiment.threshold 0.5 arrives as TestResult.threshold; the runner's verdict already used it
    assert decide(run(ok("a", 0.6, threshold=0.5)), GateOptions()).exit_code == ExitCode.OK


def test_threshold_flag_rejudges_scores() -> None:
    rows = run(bad("a", 0.7), ok("b", 0.85))
    assert decide(rows, GateOptions(threshold=0.6)).exit_code == ExitCode.OK
    strict = decide(rows, GateOptions(threshold=0.9))
    assert strict.exit_code == ExitCode.GATE_FAILED
    assert strict.reasons == ["2 test(s) below threshold: s/a [m], s/b [m]"]


def test_min_pass_rate_per_suite_and_overall() -> None:
    rows = run(ok("a1", suite="a"), ok("a2", suite="a"), ok("b1", suite="b"), bad("b2", suite="b"))
    decision = decide(rows, GateOptions(min_pass_rate=0.7))
    assert decision.exit_code == ExitCode.GATE_FAILED
    assert decision.reasons == ["suite b: pass rate 50.0% (1/2) < min 70.0%"]
    # the pass-rate gate decides how many failures are tolerated
    assert decide(rows, GateOptions(min_pass_rate=0.5)).exit_code == ExitCode.OK
    overall = decide(run(ok("a"), ok("b"), ok("c"), bad("d")), GateOptions(min_pass_rate=0.8))
    assert overall.reasons == ["overall: pass rate 75.0% (3/4) < min 80.0%"]


def test_fail_on_test_failure_can_be_forced_with_pass_rate() -> None:
    rows = run(ok("a"), ok("b"), ok("c"), bad("d"))
    decision = decide(rows, GateOptions(min_pass_rate=0.5, fail_on_test_failure=True))
    assert decision.exit_code == ExitCode.GATE_FAILED
    assert decide(rows, GateOptions(fail_on_test_failure=False)).exit_code == ExitCode.OK


def test_min_mean_score_per_suite_and_overall() -> None:
    rows = run(ok("a", 1.0, suite="a"), ok("b", 0.82, suite="b"), ok("c", 0.84, suite="b"))
    decision = decide(rows, GateOptions(min_mean_score=0.85))
    assert decision.exit_code == ExitCode.GATE_FAILED
    assert decision.reasons == ["suite b: mean score 0.830 < min 0.850"]
    assert decide(rows, GateOptions(min_mean_score=0.8)).exit_code == ExitCode.OK


def test_execution_errors_are_inconclusive_by_default() -> None:
    decision = decide(run(ok("a"), err("b")), GateOptions())
    assert decision.exit_code == ExitCode.INCONCLUSIVE and not decision.passed
    assert decision.reasons == ["1 test(s) had execution errors: s/b [m]"]
    assert decision.verdict.startswith("INCONCLUSIVE: 1/2 tests passed (1 errored)")


def test_no_fail_on_error_ignores_errors_with_a_note() -> None:
    decision = decide(run(ok("a"), err("b")), GateOptions(fail_on_error=False))
    assert decision.exit_code == ExitCode.OK
    assert decision.notes == ["1 execution error(s) ignored (--no-fail-on-error)"]


def test_all_errored_is_inconclusive_even_without_fail_on_error() -> None:
    decision = decide(run(err("a"), err("b")), GateOptions(fail_on_error=False))
    assert decision.exit_code == ExitCode.INCONCLUSIVE
    assert decision.reasons == ["nothing conclusive ran: 2 errored, 0 not run"]


def test_empty_run_is_inconclusive() -> None:
    decision = decide(run(), GateOptions())
    assert decision.exit_code == ExitCode.INCONCLUSIVE
    assert decision.reasons == ["nothing conclusive ran: no results"]


def test_budget_exhausted_is_inconclusive() -> None:
    partial = run(ok("a"), skipped("b"), budget_exhausted=True, not_run=1)
    decision = decide(partial, GateOptions())
    assert decision.exit_code == ExitCode.INCONCLUSIVE
    assert decision.reasons == ["budget exhausted: 1 test(s) not run"]
    nothing = decide(run(skipped("a"), skipped("b"), budget_exhausted=True, not_run=2), GateOptions())
    assert nothing.exit_code == ExitCode.INCONCLUSIVE
    assert nothing.reasons == ["nothing conclusive ran: 0 errored, 2 not run"]


def test_quality_failure_wins_over_inconclusive_and_lists_both() -> None:
    decision = decide(run(bad("a"), err("b")), GateOptions())
    assert decision.exit_code == ExitCode.GATE_FAILED
    assert decision.reasons == [
        "1 test(s) below threshold: s/a [m]",
        "1 test(s) had execution errors: s/b [m]",
    ]


def test_max_regression_gates_significant_drops_only() -> None:
    base = run(ok("a", 1.0), ok("b", 1.0))
    head = run(ok("a", 0.85), ok("b", 0.9999))  # a: regressed by 0.15; b: a 0.0001 drop is noise
    strict = decide(head, GateOptions(max_regression=0.1), base)
    assert strict.exit_code == ExitCode.GATE_FAILED
    assert strict.reasons == ["s/a [m]: regressed vs baseline (1.000 -> 0.850)"]
    assert decide(head, GateOptions(max_regression=0.2), base).exit_code == ExitCode.OK
    report_only = decide(head, GateOptions(), base)
    assert report_only.exit_code == ExitCode.OK
    assert report_only.notes == ["s/a [m]: regressed vs baseline (1.000 -> 0.850)"]


def test_max_regression_ignores_drops_that_are_noise_across_repeats() -> None:
    def repeated(passes: int, scores: list[float]) -> TestResult:
        score = sum(scores) / len(scores)
        agg = AttemptSummary("mean", passes, len(scores), scores=scores, mean=score)
        return ok("r", score, aggregation=agg)

    base = run(repeated(5, [1.0, 0.9, 1.0, 0.9, 1.0]))
    noisy = run(repeated(4, [0.9, 1.0, 0.8, 1.0, 0.9]))  # 4/5 passes vs 5/5: p = 0.5
    decision = decide(noisy, GateOptions(max_regression=0.01), base)
    assert decision.exit_code == ExitCode.OK
    assert decision.notes and "possible regression" in decision.notes[0]


def test_max_regression_on_suite_mean_beyond_its_standard_error() -> None:
    base = run(*(ok(f"t{i}", 1.0) for i in range(6)))
    steady = run(*(ok(f"t{i}", 0.95) for i in range(6)))  # every test -0.05: se 0
    decision = decide(steady, GateOptions(max_regression=0.03), base)
    assert decision.exit_code == ExitCode.GATE_FAILED
    assert decision.reasons == [
        "suite s: mean score fell 0.050 vs baseline (se 0.000, CI [-0.050, -0.050], p=0.0156 corrected) "
        "> max regression 0.030"  # the exact sign-flip test: 1 of the 64 sign patterns
    ]
    # single samples, each drop < 0.1 (possible regressions); mean -0.03 but se 0.026: within noise
    base9 = run(*(ok(f"t{i}", 0.9) for i in range(6)))
    noisy = run(*(ok(f"t{i}", s) for i, s in enumerate([0.81, 0.95, 0.82, 0.9, 0.81, 0.93])))
    decision = decide(noisy, GateOptions(max_regression=0.02), base9)
    assert decision.exit_code == ExitCode.OK
    assert len(decision.notes) == 3  # the three drops are reported as possible regressions


def test_rejudge_makes_reports_agree_with_the_threshold_flag() -> None:
    from agentv_ci.gating import rejudge

    summary = run(bad("a", 0.7), ok("b", 0.85), err("c"))
    lenient = rejudge(summary, 0.6)
    assert [(r.verdict, r.execution_status, r.threshold) for r in lenient.results[:2]] == [
        ("pass", "ok", 0.6),
        ("pass", "ok", 0.6),
    ]
    assert lenient.results[2] == summary.results[2]  # errors stay errors
    assert rejudge(summary, None) is summary


def test_dry_run_is_flagged_in_the_notes() -> None:
    decision = decide(run(ok("a"), dry_run=True), GateOptions())
    assert decision.notes == ["dry run: answers are placeholders, so scores say nothing about quality"]


def test_a_dry_run_reports_placeholder_scores_without_gating_them() -> None:
    decision = decide(run(ok("a"), bad("b"), dry_run=True), GateOptions(min_mean_score=0.9))
    assert (decision.exit_code, decision.passed, decision.reasons) == (ExitCode.OK, True, [])
    assert (
        decision.notes[1]
        == "dry run: quality gates not applied: 1 test(s) below threshold: s/b [m] (+1 more)"
    )
    assert decision.verdict == (
        "PASSED (dry run): 2/2 tests ran; scores are placeholders, not gated "
        "(1 would pass, 1 would fail, mean 0.600)"
    )


def test_a_dry_run_still_fails_on_errors_and_tests_that_did_not_run() -> None:
    errored = decide(run(ok("a"), err("b"), dry_run=True), GateOptions())
    assert errored.exit_code == ExitCode.INCONCLUSIVE
    assert errored.verdict.startswith("INCONCLUSIVE (dry run): 2/2 tests ran (1 errored); scores are")
    assert errored.verdict.endswith("- 1 test(s) had execution errors: s/b [m]")
    assert decide(run(ok("a"), skipped("b"), dry_run=True), GateOptions()).exit_code == ExitCode.INCONCLUSIVE


def test_not_run_rows_are_never_green_even_without_the_budget_flag() -> None:
    # `report` on a bare index.jsonl (no summary.json, or AgentV's) has no budget_exhausted fact:
    # a test that did not run still means the verdict is incomplete.
    decision = decide(run(ok("a"), skipped("b")), GateOptions())
    assert decision.exit_code == ExitCode.INCONCLUSIVE
    assert decision.reasons == ["1 test(s) did not run: s/b [m]"]
    budget = decide(run(ok("a"), skipped("b"), budget_exhausted=True, not_run=1), GateOptions())
    assert budget.reasons == ["budget exhausted: 1 test(s) not run"]


def test_a_suite_mean_drop_of_0_0001_is_never_a_regression() -> None:
    base = run(ok("a", 0.9), ok("b", 0.9))
    head = run(ok("a", 0.8999), ok("b", 0.8999))  # identical tiny drops: se 0
    decision = decide(head, GateOptions(max_regression=0.0), base)
    assert decision.exit_code == ExitCode.OK
    assert decision.reasons == [] and decision.notes == []


def test_a_verdict_flip_by_0_0001_is_not_a_broken_test() -> None:
    base = run(ok("a", 0.8))
    head = run(bad("a", 0.7999))  # crossed the 0.8 bar by noise: the threshold gate already fails it
    decision = decide(head, GateOptions(max_regression=0.0), base)
    assert decision.reasons == ["1 test(s) below threshold: s/a [m]"]
    assert decision.notes == ["s/a [m]: possible regression vs baseline (0.8000 -> 0.7999)"]


def test_threshold_flag_rejudges_the_baseline_too() -> None:
    # Same scores on both sides; a lower --threshold must not turn every old failure into "fixed".
    base = run(ok("a", 0.9), bad("b", 0.6))
    head = run(ok("a", 0.9), bad("b", 0.6))
    decision = decide(head, GateOptions(threshold=0.5, max_regression=0.0), base)
    assert decision.exit_code == ExitCode.OK
    assert decision.comparison is not None
    assert [t.status for t in decision.comparison.tests] == ["unchanged", "unchanged"]


def test_rejudge_recounts_attempt_passes() -> None:
    from agentv_ci.gating import rejudge

    trials = [ok("r", 0.9, attempt=0), bad("r", 0.6, attempt=1), bad("r", 0.7, attempt=2)]
    agg = AttemptSummary("mean", 1, 3, scores=[0.9, 0.6, 0.7], mean=0.733)
    summary = run(bad("r", 0.733, trials=trials, aggregation=agg), bad("s", 0.65, aggregation=agg))
    lenient = rejudge(summary, 0.65)
    with_trials, agg_only = lenient.results
    assert [t.verdict for t in with_trials.trials] == ["pass", "fail", "pass"]
    assert with_trials.aggregation is not None and with_trials.aggregation.passed_attempts == 2
    assert agg_only.aggregation is not None and agg_only.aggregation.passed_attempts == 2


def test_a_changed_definition_is_never_a_regression_however_far_it_fell() -> None:
    # a: its grader changed and its score collapsed; b..g: the whole suite changed definition
    base = run(
        ok("a", 1.0, fingerprint="a-old"), *(ok(f"t{i}", 1.0, fingerprint=f"t{i}-old") for i in range(6))
    )
    head = run(
        ok("a", 0.81, fingerprint="a-new"), *(ok(f"t{i}", 0.85, fingerprint=f"t{i}-new") for i in range(6))
    )
    decision = decide(head, GateOptions(max_regression=0.0), base)
    assert decision.exit_code == ExitCode.OK, decision.reasons
    assert decision.comparison is not None
    assert {t.status for t in decision.comparison.tests} == {"changed"}
    assert decision.comparison.suites[0].matched == 0  # no suite delta from changed tests
    assert decision.notes == [
        "7 test(s) changed definition since the baseline, not compared: s/a [m], s/t0 [m], s/t1 [m], "
        "s/t2 [m], s/t3 [m] ..."
    ]
    # the same drops with the same fingerprints (or none on one side) are gated as before
    same = run(ok("a", 0.81, fingerprint="a-old"), *(ok(f"t{i}", 0.85) for i in range(6)))
    gated = decide(same, GateOptions(max_regression=0.0), base)
    assert gated.exit_code == ExitCode.GATE_FAILED
    assert "s/a [m]: regressed vs baseline (1.000 -> 0.810)" in gated.reasons
    assert any(r.startswith("suite s: mean score fell") for r in gated.reasons)


def test_max_cost_fails_a_run_that_spent_more_and_passes_one_that_spent_less() -> None:
    over = decide(run(ok("a"), spent_usd=0.25), GateOptions(max_cost_usd=0.2))
    assert over.exit_code == ExitCode.GATE_FAILED
    assert over.reasons == ["cost $0.2500 > max cost $0.2000"]
    under = decide(run(ok("a"), spent_usd=0.15), GateOptions(max_cost_usd=0.2))
    assert under.exit_code == ExitCode.OK and under.reasons == []


def test_max_cost_falls_back_on_the_rows_costs_without_a_recorded_spend() -> None:
    decision = decide(run(ok("a", cost_usd=0.3), ok("b", cost_usd=0.3)), GateOptions(max_cost_usd=0.5))
    assert decision.exit_code == ExitCode.GATE_FAILED
    assert decision.reasons == ["cost $0.6000 > max cost $0.5000"]


def test_a_cost_that_is_not_known_cannot_pass_max_cost() -> None:
    """No cost recorded, or answers without a price under the limit: inconclusive, never a pass."""
    nothing = decide(run(ok("a")), GateOptions(max_cost_usd=1.0))
    assert nothing.exit_code == ExitCode.INCONCLUSIVE
    assert nothing.reasons == ["max cost $1.00 not checked: the run recorded no cost"]
    floor = decide(run(ok("a"), spent_usd=0.1, unpriced=2), GateOptions(max_cost_usd=1.0))
    assert floor.exit_code == ExitCode.INCONCLUSIVE
    assert "2 answer(s) came with no price, so $0.1000 is only a floor" in floor.reasons[0]
    # over the limit already: known to be red whatever the unpriced answers cost
    over = decide(run(ok("a"), spent_usd=2.0, unpriced=2), GateOptions(max_cost_usd=1.0))
    assert over.exit_code == ExitCode.GATE_FAILED


def test_a_dry_run_does_not_gate_on_cost() -> None:
    decision = decide(run(ok("a", dry_run=True), dry_run=True), GateOptions(max_cost_usd=0.01))
    assert decision.exit_code == ExitCode.OK


def test_a_waived_failure_informs_and_an_expired_quarantine_blocks_naming_its_owner() -> None:
    from agentv_ci.model.waivers import ANY_TARGET, Waiver, WaiverBook, waiver_key

    summary = run(
        bad("flaky", 0.2), bad("parked", 0.1), bad("stale", 0.0), bad("plain", 0.3), ok("fine", 1.0)
    )
    book = WaiverBook(
        tests={
            waiver_key("s", "flaky", "m"): Waiver("flaky", "flaky: failed now; passed 3 of 5 runs on main"),
            waiver_key("s", "parked", ANY_TARGET): Waiver(
                "quarantined", "quarantined by @ana until 2099-01-01"
            ),
            waiver_key("s", "stale", "m"): Waiver("expired", "quarantine expired 2020-01-01 (@bo: slow API)"),
        },
        notes=["quarantine entry s/new only in the pull request: no effect"],
    )
    decision = decide(summary, GateOptions(waivers=book))
    assert decision.exit_code == ExitCode.GATE_FAILED
    assert "s/stale [m]: failed, quarantine expired 2020-01-01 (@bo: slow API)" in decision.reasons
    assert "2 test(s) below threshold: s/stale [m], s/plain [m]" in decision.reasons
    assert [w.label for w in decision.waived] == ["s/flaky [m]", "s/parked [m]"]
    assert (
        "s/flaky [m]: failed; not blocking, flaky: failed now; passed 3 of 5 runs on main" in decision.notes
    )
    assert "quarantine entry s/new only in the pull request: no effect" in decision.notes
    # only waived failures: green, and the numbers still count them
    only = decide(run(bad("flaky", 0.2), ok("fine", 1.0)), GateOptions(waivers=book))
    assert only.exit_code == ExitCode.OK and only.totals is not None and only.totals.failed == 1


def test_a_quarantine_entry_wins_over_flakiness_when_books_merge() -> None:
    from agentv_ci.model.waivers import Waiver, WaiverBook, waiver_key

    key = waiver_key("s", "t", "m")
    flaky = WaiverBook(tests={key: Waiver("flaky", "flaky"), waiver_key("s", "u", "m"): Waiver("flaky", "f")})
    quarantine = WaiverBook(tests={key: Waiver("expired", "expired")}, notes=["n"])
    both = flaky.merged(quarantine)
    assert both.tests[key].kind == "expired" and both.tests[waiver_key("s", "u", "m")].kind == "flaky"
    assert quarantine.merged(flaky).tests[key].kind == "expired" and both.notes == ["n"]
