"""Gates and reports of a run counted against its plan: incomplete runs are inconclusive."""

from __future__ import annotations

from agentv_ci.errors import ExitCode
from agentv_ci.gating import GateOptions, decide
from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.reporting.console import render_console
from agentv_ci.reporting.markdown import render_markdown


def _row(test_id: str, score: float, status: str = "ok") -> TestResult:
    verdict = "skip" if status == "not_run" else ("pass" if score >= 0.8 else "fail")
    return TestResult(
        test_id=test_id, suite="s", target="x", score=score, execution_status=status, verdict=verdict
    )  # type: ignore[arg-type]


def test_planned_tests_without_a_result_make_the_run_incomplete() -> None:
    summary = RunSummary(
        results=[_row("a", 1.0), _row("b", 1.0), _row("c", 0.0, "not_run")],
        planned=5,
        not_run=3,
        missing_shards=["2/3"],
    )
    decision = decide(summary, GateOptions())
    assert decision.exit_code == ExitCode.INCONCLUSIVE
    assert decision.reasons[0] == "incomplete: 3 of 5 tests did not run (no results from shard 2/3)"
    assert "incomplete: 3 of 5 tests did not run" in decision.verdict
    assert "incomplete: 3 of 5 tests did not run" in render_console(summary, decision)
    assert "incomplete: 3 of 5 tests did not run" in render_markdown(summary, decision)
    # the missing shard's tests have no row, yet the headline counts and the outputs count them
    assert "2/5 tests passed (3 not run)" in decision.verdict
    from agentv_ci.github.outputs import run_outputs

    outputs = run_outputs(
        summary, decision, results_path=None, junit_path=None, sarif_path=None, comment_url=None
    )
    assert (outputs["tests"], outputs["passed"], outputs["not_run"]) == ("5", "2", "3")


def test_a_failing_test_still_fails_an_incomplete_run_and_both_are_said() -> None:
    summary = RunSummary(results=[_row("a", 0.2), _row("b", 0.0, "not_run")], planned=2, not_run=1)
    decision = decide(summary, GateOptions())
    assert decision.exit_code == ExitCode.GATE_FAILED
    assert "incomplete: 1 of 2 tests did not run" in decision.reasons


def test_a_complete_planned_run_passes_and_an_unplanned_one_says_the_plan_is_unknown() -> None:
    complete = RunSummary(results=[_row("a", 1.0)], planned=1)
    decision = decide(complete, GateOptions())
    assert decision.exit_code == ExitCode.OK
    assert "plan unknown" not in render_console(complete, decision)
    unknown = RunSummary(results=[_row("a", 1.0)], plan_unknown=True)
    decision = decide(unknown, GateOptions())
    assert decision.exit_code == ExitCode.OK  # read as before
    assert "plan unknown" in render_console(unknown, decision)
    assert "plan unknown" in render_markdown(unknown, decision)


def test_an_incomplete_baseline_cannot_pass_the_regression_gate() -> None:
    """The head is complete and green, but the baseline was killed after 1 of 3 tests: a regression
    among the 2 it never ran cannot be ruled out, so `--max-regression` is inconclusive (as
    `compare` is); without that gate it is said as a note."""
    head = RunSummary(results=[_row("a", 1.0), _row("b", 0.5), _row("c", 1.0)], planned=3)
    base = RunSummary(
        results=[_row("a", 1.0), _row("b", 0.0, "not_run"), _row("c", 0.0, "not_run")], planned=3, not_run=2
    )
    gated = decide(head, GateOptions(threshold=0.4, max_regression=0.1), base)
    assert gated.exit_code == ExitCode.INCONCLUSIVE
    assert "baseline incomplete: 2 of 3 tests did not run in it" in gated.verdict
    shown = decide(head, GateOptions(threshold=0.4), base)
    assert shown.exit_code == ExitCode.OK
    assert any("baseline incomplete: 2 of 3 tests did not run in it" in n for n in shown.notes)
    complete = RunSummary(results=[_row("a", 1.0), _row("b", 0.5), _row("c", 1.0)], planned=3)
    assert decide(head, GateOptions(threshold=0.4, max_regression=0.1), complete).exit_code == ExitCode.OK
