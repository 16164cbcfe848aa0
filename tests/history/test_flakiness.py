"""measure_flakiness and flaky_waivers on hand-made rows: what counts as an attempt, flips across
errors, a changed definition, and rows that claim more passes than attempts."""

from __future__ import annotations

from agentv_ci.history.flakiness import measure_flakiness
from agentv_ci.history.flaky_waivers import flaky_waivers, with_flaky_waivers
from agentv_ci.model.result import AttemptSummary, TestResult
from agentv_ci.model.waivers import Waiver, WaiverBook, waiver_key


def _row(
    verdict: str, status: str | None = None, fingerprint: str | None = None, **fields: object
) -> TestResult:
    status = status or ("ok" if verdict == "pass" else "quality_failure")
    return TestResult(
        test_id="t", suite="s", target="g", score=1.0 if verdict == "pass" else 0.0,
        execution_status=status, verdict=verdict, fingerprint=fingerprint, **fields,  # type: ignore[arg-type]
    )  # fmt: skip


def test_errors_and_not_run_are_no_attempts_and_flips_skip_them() -> None:
    runs = [[_row("pass")], [_row("fail", "execution_error")], [_row("skip", "not_run")], [_row("fail")]]
    [test] = measure_flakiness(runs).tests
    assert (test.runs, test.attempts, test.passes, test.flips, test.label) == (2, 2, 1, 1, "flaky")


def test_a_test_with_only_errors_is_unmeasured_not_labelled() -> None:
    report = measure_flakiness([[_row("fail", "execution_error")]])
    assert report.tests == [] and report.unmeasured == ["s/t [g]"] and report.runs == 1


def test_repeats_count_attempts_and_a_foreign_claim_is_clamped() -> None:
    claims = AttemptSummary(strategy="mean", passed_attempts=9, total_attempts=3)
    [test] = measure_flakiness([[_row("pass", aggregation=claims)]]).tests
    assert (test.attempts, test.passes, test.label) == (3, 3, "stable-pass")
    trials = [_row("pass"), _row("fail"), _row("fail", "execution_error")]
    [test] = measure_flakiness([[_row("fail", trials=trials)]]).tests
    assert (test.attempts, test.passes, test.runs_passed, test.label) == (2, 1, 0, "flaky")


def test_only_runs_since_the_definition_changed_count() -> None:
    runs = [
        [_row("fail", fingerprint="old")],
        [_row("pass", fingerprint="new")],
        [_row("pass", fingerprint="new")],
    ]
    [test] = measure_flakiness(runs).tests
    assert (test.runs, test.label, test.fingerprint) == (2, "stable-pass", "new")


def test_waivers_only_for_flaky_tests_with_the_same_definition() -> None:
    report = measure_flakiness([[_row("pass", fingerprint="a")], [_row("fail", fingerprint="a")]])
    book = flaky_waivers(report, [_row("fail", fingerprint="a")], "on main")
    assert book.lookup("s", "t", "g") == Waiver("flaky", "flaky: failed now; passed 1 of 2 runs on main")
    changed = flaky_waivers(report, [_row("fail", fingerprint="b")], "on main")
    assert changed.tests == {} and any("definition changed" in note for note in changed.notes)
    stable = measure_flakiness([[_row("pass")], [_row("pass")]])
    assert flaky_waivers(stable, [_row("fail")], "on main").tests == {}


def test_a_quarantine_entry_wins_over_flakiness() -> None:
    report = measure_flakiness([[_row("pass")], [_row("fail")]])
    quarantine = WaiverBook(tests={waiver_key("s", "t", "g"): Waiver("expired", "quarantine expired")})
    merged = with_flaky_waivers(quarantine, report, [_row("fail")], "on main")
    assert merged is not None and merged.lookup("s", "t", "g") == Waiver("expired", "quarantine expired")
    assert with_flaky_waivers(quarantine, None, [], "on main") is quarantine
