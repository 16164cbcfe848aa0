from __future__ import annotations

import re
from pathlib import Path

from agentv_ci.compare import compare_runs
from agentv_ci.gating import GateOptions, decide
from agentv_ci.model.result import GraderResult, RunSummary, TestResult
from agentv_ci.plugins import ReportOptions
from agentv_ci.reporting.markdown import MAX_CHARS, MarkdownReporter, render_markdown
from tests.reporting.golden import FAKE_REPO, assert_golden
from tests.reporting.sample_runs import HOSTILE, baseline_summary, sample_summary


def _render(summary: RunSummary, baseline: RunSummary | None = None, **kw: object) -> str:
    decision = decide(summary, GateOptions(), baseline)
    comparison = compare_runs(baseline.results, summary.results) if baseline else None
    return render_markdown(summary, decision, comparison=comparison, **kw)  # type: ignore[arg-type]


def test_markdown_matches_golden() -> None:
    assert_golden("summary.md", _render(sample_summary(FAKE_REPO), baseline_summary(FAKE_REPO)))


def test_verdict_line_comes_first() -> None:
    text = _render(sample_summary(FAKE_REPO))
    first = text.splitlines()[0]
    assert first.startswith("❌ **agentv-ci: FAILED")
    assert "2/6 tests passed" in first


def test_table_has_a_row_per_suite_with_cost_tokens_duration() -> None:
    text = _render(sample_summary(FAKE_REPO), baseline_summary(FAKE_REPO))
    smoke = next(line for line in text.splitlines() if line.startswith("| smoke |"))
    # tests, pass rate, mean, delta vs baseline (mean of 0.0 and -0.65 with its se), cost, tokens, duration
    assert (
        smoke == "| smoke | 2 | 50% (1/2) | 0.625 | -0.325 [-1.000, +1.000] over 2 of 2 tests "
        "| $0.0052 | 155 | 3.7s |"
    )
    assert "| **Total** |" in text


def _outside_fences(text: str) -> str:
    """The text with fenced code blocks removed (a fence closes only with a run at least as long)."""
    kept, fence = [], None
    for line in text.splitlines():
        run = re.match(r"^(`{3,})", line)
        if fence is None and run:
            fence = run.group(1)
        elif fence is not None and line.strip() == fence:
            fence = None
        elif fence is None:
            kept.append(line)
    assert fence is None, "an unclosed code fence"
    return "\n".join(kept)


def test_model_text_is_escaped() -> None:
    text = _render(sample_summary(FAKE_REPO))
    assert "@octocat" not in text  # a zero-width space breaks the mention, also inside fences
    assert not re.search(r"^\s*::", text, re.MULTILINE)
    assert "\x1b" not in text and "\x00" not in text
    # the hostile answer contains a ``` fence: it must stay inside a longer fence
    assert "````text" in text
    prose = _outside_fences(text)
    assert "break out" not in prose and "<script>" not in prose
    html = [tag for tag in re.findall(r"</?([a-zA-Z]+)", prose) if tag not in ("details", "summary")]
    assert html == []


def test_selection_reasons_and_baseline_changes_are_shown() -> None:
    text = _render(sample_summary(FAKE_REPO), baseline_summary(FAKE_REPO))
    assert "#### Why these evals ran (2)" in text
    assert "global trigger: .agentv/targets.yaml changed" in text
    assert "| broken | smoke/refund-policy \\[mock\\] | 0.900 | 0.250 | -0.650 |" in text
    # 5/5 -> 3/5 passes: Fisher p = 0.22, not significant
    assert "| possible regression | math/flaky-math \\[mock\\] | 1.000 | 0.600 | -0.400 |" in text
    # the math delta is over 1 of its 4 tests: the others are listed with their old and new scores
    math = next(line for line in text.splitlines() if line.startswith("| math |"))
    assert "| -0.400 over 1 of 4 tests |" in math
    left_out = next(line for line in text.splitlines() if line.startswith("- math: "))
    assert "1 test changed definition: math/adds \\[mock\\] old 0.500 -&gt; new 1.000" in left_out
    assert "2 new: math/later \\[mock\\] new -, math/timeout \\[mock\\] new -" in left_out
    assert "1 removed: math/retired \\[mock\\] old 1.000" in left_out


def test_huge_run_stays_under_limit_and_keeps_verdict() -> None:
    rows = [
        TestResult(
            f"test-{i}-" + "x" * 80, f"suite-{i % 700}", "model", 0.1, "quality_failure",
            scores=[GraderResult("g", "llm-grader", 0.1, "fail")], input="q" * 5000, output="a" * 50_000,
        )
        for i in range(3000)
    ]  # fmt: skip
    summary = RunSummary(rows, selection={f"evals/{i}.yaml": "changed " * 20 for i in range(500)})
    text = _render(summary, summary)
    assert len(text) < MAX_CHARS
    assert text.startswith("❌ **agentv-ci: FAILED: 0/3000 tests passed")
    assert "more suites" in text


def test_details_are_truncated_before_anything_else() -> None:
    rows = [
        TestResult(f"t{i}", "s", "m", 0.0, "quality_failure", output="y" * 10_000, input="z" * 10_000)
        for i in range(40)
    ]
    text = _render(RunSummary(rows), limit=8_000)
    assert len(text) < 8_000
    assert "left out (size limit 8,000 characters)" in text
    assert "| s | 40 | 0% (0/40) |" in text


def test_reporter_plugin_uses_decision_and_selection_from_extras(tmp_path: Path) -> None:
    summary = RunSummary([TestResult("t", "s", "m", 1.0, "ok", verdict="pass", output=HOSTILE)])
    out = tmp_path / "summary.md"
    selection = {str(tmp_path / "evals" / "a.yaml"): "picked by hand"}
    options = ReportOptions(path=out, repo_root=tmp_path, selection=selection)
    MarkdownReporter().write(summary, options)
    text = out.read_text(encoding="utf-8")
    assert text.startswith("✅ **agentv-ci: PASSED: 1/1 tests passed")
    assert "- `evals/a.yaml`: picked by hand" in text  # absolute selection paths shown repo-relative


def test_flaky_and_quarantined_sections_show_the_evidence_and_only_when_they_have_content() -> None:
    from agentv_ci.model.result import AttemptSummary
    from agentv_ci.model.waivers import Waiver, WaiverBook, waiver_key

    def repeated(test_id: str, passes: int, n: int) -> TestResult:
        mean = passes / n
        verdict = "pass" if mean >= 0.8 else "fail"
        return TestResult(
            test_id, "s", "m", mean, "ok" if verdict == "pass" else "quality_failure", verdict=verdict,
            threshold=0.8,
            aggregation=AttemptSummary("mean", passes, n, scores=[1.0] * passes + [0.0] * (n - passes)),
        )  # fmt: skip

    base = RunSummary(results=[repeated("wobbly", 20, 20), repeated("parked", 20, 20), repeated("ok", 5, 5)])
    head = RunSummary(results=[repeated("wobbly", 14, 20), repeated("parked", 2, 20), repeated("ok", 5, 5)])
    book = WaiverBook(
        tests={
            waiver_key("s", "wobbly", "m"): Waiver("flaky", "flaky: failed now; passed 3 of 5 runs on main"),
            waiver_key("s", "parked", "m"): Waiver(
                "quarantined", "quarantined (owner @ana, until 2099-01-01)"
            ),
        }
    )
    decision = decide(head, GateOptions(waivers=book, max_regression=0.0), base)
    assert decision.exit_code == 0, decision.reasons  # both failures and the regression are waived
    text = render_markdown(head, decision, comparison=decision.comparison)
    flaky = text.split("#### Flaky (1)")[1].split("####")[0]
    assert "s/wobbly \\[m\\]" in flaky and "passed 3 of 5 runs on main" in flaky
    assert "passes 20/20 -&gt; 14/20" in flaky and "corrected" in flaky and "CI \\[" in flaky
    quarantined = text.split("#### Quarantined (1)")[1]
    assert "s/parked \\[m\\]" in quarantined and "ana, until 2099-01-01" in quarantined  # @-mention broken
    assert "passes 20/20 -&gt; 2/20" in quarantined
    # without waived tests neither heading appears
    plain = render_markdown(
        head, decide(head, GateOptions(), base), comparison=compare_runs(base.results, head.results)
    )
    assert "#### Flaky" not in plain and "#### Quarantined" not in plain
