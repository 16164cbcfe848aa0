from __future__ import annotations

import json
import subprocess
from pathlib import Path

import msgspec
import pytest
from typer.testing import CliRunner

from agentv_ci.cli import app
from agentv_ci.compare import compare_runs
from agentv_ci.model.result import AttemptSummary, TestResult
from agentv_ci.reporting.comparison_text import render_comparison
from agentv_ci.results.results_file import read_results
from tests.cli_helpers import run_cli
from tests.reporting.golden import assert_golden

DATA = Path(__file__).resolve().parent / "reporting" / "data"
BASE, HEAD = DATA / "agentv_base.jsonl", DATA / "agentv_head.jsonl"


def row(test_id: str, score: float, threshold: float = 0.8, **kw: object) -> TestResult:
    verdict = "pass" if score >= threshold else "fail"
    status = "ok" if verdict == "pass" else "quality_failure"
    return TestResult(test_id, "s", "m", score, status, verdict=verdict, threshold=threshold, **kw)  # type: ignore[arg-type]


def repeated(test_id: str, scores: list[float]) -> TestResult:
    passes = sum(1 for s in scores if s >= 0.8)
    mean = sum(scores) / len(scores)
    return row(
        test_id, mean, aggregation=AttemptSummary("mean", passes, len(scores), scores=scores, mean=mean)
    )


def statuses(base: list[TestResult], head: list[TestResult]) -> dict[str, str]:
    return {t.test_id: t.status for t in compare_runs(base, head).tests}


def test_single_sample_statuses() -> None:
    errored = TestResult("err", "s", "m", 0.0, "execution_error", error="x")
    base = [row("imp", 0.5), row("reg", 1.0), row("wobble", 1.0), row("same", 1.0), row("fix", 0.5),
            row("brk", 0.9), row("gone", 1.0), row("err", 1.0)]  # fmt: skip
    head = [row("imp", 0.7), row("reg", 0.85), row("wobble", 0.95), row("same", 0.9999), row("fix", 0.9),
            row("brk", 0.5), row("fresh", 1.0), errored]  # fmt: skip
    assert statuses(base, head) == {
        "imp": "improved",
        "reg": "regressed",
        "wobble": "possible regression",
        "same": "unchanged",  # a 0.0001 drop is never flagged
        "fix": "fixed",
        "brk": "broken",
        "gone": "removed",
        "fresh": "new",
        "err": "not comparable",
    }


def test_repeats_are_judged_on_pass_counts_corrected_as_one_family() -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    base = [repeated("collapse", [1.0] * 10), repeated("dip", [1.0] * 10), repeated("slide", [1.0] * 10),
            repeated("recover", [0.0] * 10), repeated("maybe", [1, 1] + [0] * 8),
            repeated("jitter", [0.9, 1.0] * 5)]  # fmt: skip
    head = [repeated("collapse", [1] + [0] * 9), repeated("dip", [1] * 7 + [0] * 3),
            repeated("slide", [0.85] * 10), repeated("recover", [1.0] * 10),
            repeated("maybe", [1] * 4 + [0] * 6), repeated("jitter", [1.0, 0.9] * 5)]  # fmt: skip
    comparison = compare_runs(base, head)
    result = {t.test_id: t for t in comparison.tests}
    collapse = result["collapse"]
    assert collapse.status == "broken"  # 10/10 -> 1/10
    raw = scipy_stats.fisher_exact([[10, 0], [1, 9]], alternative="greater").pvalue
    assert collapse.p_uncorrected == pytest.approx(raw, abs=1e-6)
    # the smallest p-value takes Holm's first step: times the size of the trimmed family
    assert comparison.family_size >= 2
    assert collapse.p_value == pytest.approx(min(1.0, raw * comparison.family_size), abs=1e-6)
    assert collapse.ci95 is not None and collapse.ci95[1] < 0  # the interval agrees with the verdict
    assert "passes 10/10 -> 1/10" in collapse.describe() and "corrected" in collapse.describe()
    assert result["dip"].status == "possible regression"  # 10/10 -> 7/10: raw p 0.105
    assert result["dip"].ci95 is not None and result["dip"].ci95[1] >= 0
    # every attempt still passes: the pass counts did not move, the score did (a note, never a block)
    assert result["slide"].status == "possible regression" and result["slide"].p_value == 1.0
    assert result["recover"].status == "fixed"  # 0/10 -> 10/10
    assert result["maybe"].status == "possible improvement"  # 2/10 -> 4/10
    assert result["jitter"].status == "unchanged"


def test_a_drop_that_is_significant_alone_is_not_after_the_family_correction() -> None:
    # 5/5 -> 1/5 (raw p 0.024) beside a suite of other noisy repeated tests
    base = [repeated("drop", [1.0] * 5)] + [repeated(f"n{i}", [1, 1, 1, 0, 0]) for i in range(8)]
    head = [repeated("drop", [1, 0, 0, 0, 0])] + [repeated(f"n{i}", [1, 1, 0, 0, 1]) for i in range(8)]
    comparison = compare_runs(base, head)
    drop = next(t for t in comparison.tests if t.test_id == "drop")
    assert drop.p_uncorrected == pytest.approx(6 / 252, abs=1e-6)
    assert drop.p_value is not None and drop.p_value >= 0.05
    assert drop.status == "possible regression"


def test_suite_mean_delta_with_standard_error() -> None:
    comparison = compare_runs(
        [row("a", 1.0), row("b", 1.0), row("c", 0.5)], [row("a", 0.9), row("b", 0.7), row("c", 0.5)]
    )
    (suite,) = comparison.suites
    assert suite.matched == 3
    assert suite.mean_delta == pytest.approx(-0.133333, abs=1e-6)
    assert suite.stderr == pytest.approx(0.088192, abs=1e-6)
    assert suite.counts == {"broken": 1, "possible regression": 1, "unchanged": 1}  # b flips its verdict


def test_agentv_rows_compare_with_trials_and_per_attempt_rows() -> None:
    comparison = compare_runs(read_results(BASE), read_results(HEAD))
    result = {t.test_id: t for t in comparison.tests}
    assert result["capital-of-france"].status == "unchanged"
    assert result["longest-river"].status == "broken"
    assert result["tallest-mountain"].status == "not comparable"  # errored in the baseline
    assert result["new-legacy-row"].status == "new"
    ocean = result["ocean-count"]  # trials[] on one side, 5 per-attempt rows on the other
    assert (ocean.base_passes, ocean.base_attempts, ocean.head_passes, ocean.head_attempts) == (3, 5, 0, 5)
    assert ocean.status == "possible regression"  # p = 0.083 and the score CI includes 0


def test_render_formats_match_golden() -> None:
    comparison = compare_runs(read_results(BASE), read_results(HEAD))
    assert_golden("compare.txt", render_comparison(comparison, "table") + "\n")
    assert_golden("compare.md", render_comparison(comparison, "markdown") + "\n")
    assert_golden("compare.json", render_comparison(comparison, "json") + "\n")
    data = json.loads(render_comparison(comparison, "json"))
    assert {t["status"] for t in data["tests"]} >= {"broken", "new", "unchanged"}


def test_compare_command_in_process() -> None:
    result = CliRunner().invoke(app, ["compare", str(BASE), str(HEAD), "--format", "markdown"])
    assert result.exit_code == 0, result.output
    assert "| broken | geography/longest-river \\[gpt\\] |" in result.output


def test_compare_command_exit_codes_in_subprocess() -> None:
    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return run_cli("compare", str(BASE), str(HEAD), *extra)

    strict = run("--max-regression", "0.1")
    assert strict.returncode == 1, strict.stderr
    assert "regression: geography/longest-river [gpt]: broken" in strict.stderr
    assert run("--max-regression", "0.6").returncode == 0  # the 0.5 drop is tolerated
    assert run("--format", "yaml").returncode == 2
    missing = run_cli("compare", str(BASE), str(DATA / "nope.jsonl"))
    assert missing.returncode == 2
    assert "nope.jsonl: error: results file not found" in missing.stderr


def test_inconsistent_attempt_counts_in_a_results_file_do_not_crash() -> None:
    # A hand-edited or foreign row can claim more passes than attempts; compare must still answer.
    base = row("t", 1.0, aggregation=AttemptSummary("pass_at_k", 5, 3))
    head = row("t", 1.0, aggregation=AttemptSummary("pass_at_k", 3, 3))
    (result,) = compare_runs([base], [head]).tests
    assert (result.base_passes, result.base_attempts, result.status) == (3, 3, "unchanged")
    # trials that all errored under a conclusive row: judged as a single sample
    errored = [TestResult("t", "s", "m", 0.0, "execution_error", error="x")] * 2
    (only,) = compare_runs([row("t", 0.9, trials=errored)], [row("t", 0.9, trials=errored)]).tests
    assert (only.base_attempts, only.status) == (1, "unchanged")


def test_agentv_rows_with_camel_case_and_missing_fields(tmp_path: Path) -> None:
    base, head = tmp_path / "base.jsonl", tmp_path / "head.jsonl"
    base.write_text(
        '{"testId":"t1","suite":"s","target":"gpt","score":0.9,"executionStatus":"ok","costUsd":0.1}\n'
        '{"test_id":"t2","score":0.5}\n'
        '{"test_id":"t3","score":0,"error":"boom"}\n'
        + "".join(
            f'{{"test_id":"t5","suite":"s","target":"gpt","score":1,"attempt":{i},"execution_status":"ok"}}\n'
            for i in range(3)
        ),
        encoding="utf-8",
    )
    head.write_text(
        '{"testId":"t1","suite":"s","target":"gpt","score":0.7,"executionStatus":"quality_failure"}\n'
        '{"test_id":"t2","score":0.9}\n'
        '{"test_id":"t3","score":1}\n'
        + "".join(
            f'{{"test_id":"t5","suite":"s","target":"gpt","score":0,"attempt":{i},'
            '"execution_status":"quality_failure"}\n'
            for i in range(3)
        ),
        encoding="utf-8",
    )
    result = {t.test_id: t for t in compare_runs(read_results(base), read_results(head)).tests}
    assert result["t1"].status == "broken" and result["t1"].delta == pytest.approx(-0.2)
    # no suite/target/verdict/status: suite "default", target "default", verdict from score >= 0.8
    assert (result["t2"].suite, result["t2"].target, result["t2"].status) == ("default", "default", "fixed")
    assert result["t3"].status == "not comparable"  # errored in the baseline
    t5 = result["t5"]  # one row per attempt on both sides: 3/3 -> 0/3
    assert (t5.base_passes, t5.base_attempts, t5.head_passes, t5.head_attempts) == (3, 3, 0, 3)
    # Fisher p = 0.05 is not below alpha: three attempts a side cannot show this drop is not noise
    assert t5.p_uncorrected == pytest.approx(0.05) and t5.p_value is not None and t5.p_value >= 0.05
    assert t5.status == "possible regression"


def test_describe_shows_equal_scores_plainly_and_clamps_the_interval() -> None:
    same = compare_runs([repeated("t", [1.0, 1.0, 1.0])], [repeated("t", [1.0, 1.0, 1.0])]).tests[0]
    assert same.describe().startswith("1.000 -> 1.000")
    drop = compare_runs([repeated("t", [1.0, 1.0, 1.0])], [repeated("t", [0.0, 0.0, 0.2])]).tests[0]
    assert drop.ci95 is not None and drop.ci95[0] >= -1.0  # a score difference cannot pass -1


def test_markdown_comparison_stays_under_the_comment_limit() -> None:
    from agentv_ci.reporting.markdown import MAX_CHARS

    base = [row(f"test-{i}-" + "x" * 100, 1.0) for i in range(20_000)]
    head = [row(f"test-{i}-" + "x" * 100, 0.1) for i in range(20_000)]
    text = render_comparison(compare_runs(base, head), "markdown")
    assert len(text) < MAX_CHARS
    assert "| s | 20000 of 20000 | -0.900 |" in text  # the suite summary is never cut
    assert "more changed tests" in text and "--format json" in text


def test_a_test_whose_definition_changed_is_changed_never_worse_or_better() -> None:
    base = [row("edited", 1.0, fingerprint="1111"), row("same", 1.0, fingerprint="2222"),
            row("old-row", 1.0), row("fixed-by-edit", 0.2, fingerprint="4444"), row("b", 0.9),
            row("c", 0.9)]  # fmt: skip
    head = [row("edited", 0.3, fingerprint="1112"), row("same", 0.3, fingerprint="2222"),
            row("old-row", 0.3, fingerprint="3333"), row("fixed-by-edit", 1.0, fingerprint="4445"),
            row("b", 0.9), row("c", 0.8)]  # fmt: skip
    comparison = compare_runs(base, head)
    result = {t.test_id: t for t in comparison.tests}
    assert {k: t.status for k, t in result.items()} == {
        "edited": "changed",
        "same": "broken",  # same definition: its drop is a regression as before
        "old-row": "broken",  # a baseline row without a fingerprint compares as before
        "fixed-by-edit": "changed",
        "b": "unchanged",
        "c": "possible regression",
    }
    edited = result["edited"]
    assert (edited.base_score, edited.head_score, edited.delta) == (1.0, 0.3, -0.7)
    assert (edited.base_fingerprint, edited.head_fingerprint) == ("1111", "1112")
    assert edited.describe() == "definition changed, 1.000 -> 0.300"
    assert comparison.regressions == [result["old-row"], result["same"]]  # sorted by key
    assert result["edited"] not in comparison.worse and result["fixed-by-edit"] not in comparison.worse
    (suite,) = comparison.suites
    assert suite.matched == 4  # the two changed tests add no delta
    assert suite.mean_delta == pytest.approx((-0.7 - 0.7 + 0.0 - 0.1) / 4)
    assert suite.counts["changed"] == 2

    table = render_comparison(comparison, "table")
    assert "changed              s/edited [m]" in table
    assert "definition changed, 1.000 -> 0.300" in table
    markdown = render_comparison(comparison, "markdown")
    assert (
        "| changed | s/edited \\[m\\] | 1.000 | 0.300 | -0.700 | definition changed, 1.000 -&gt; 0.300 |"
        in markdown
    )
    data = json.loads(render_comparison(comparison, "json"))
    edited_json = next(t for t in data["tests"] if t["test_id"] == "edited")
    assert edited_json["status"] == "changed"
    assert (edited_json["base_fingerprint"], edited_json["head_fingerprint"]) == ("1111", "1112")
    assert "base_fingerprint" not in next(t for t in data["tests"] if t["test_id"] == "same")


def test_a_suite_delta_says_over_how_many_tests_and_is_na_when_none_matched() -> None:
    """A suite whose only test changed definition (1.000 -> 0.875) has no delta: `n/a`, never
    `+0.000`, with the test and its old and new scores; another suite's delta counts its tests."""
    base = [row("t", 1.0, fingerprint="1111"), row("a", 0.9), row("b", 0.9), row("gone", 0.5)]
    base = [base[0], *(msgspec.structs.replace(r, suite="s2") for r in base[1:])]
    head = [row("t", 0.875, fingerprint="2222"), row("a", 0.9), row("b", 0.7), row("fresh", 1.0)]
    head = [head[0], *(msgspec.structs.replace(r, suite="s2") for r in head[1:])]
    comparison = compare_runs(base, head)
    only_changed, _ = comparison.suites
    assert (only_changed.suite, only_changed.matched, only_changed.mean_delta) == ("s", 0, None)

    table = render_comparison(comparison, "table").splitlines()
    assert "s: mean delta n/a (0 of 1 test comparable); 1 changed" in table
    assert "  not in the delta: 1 test changed definition: s/t [m] old 1.000 -> new 0.875" in table
    assert (
        "s2: mean delta -0.100 [-0.731, +0.531] over 2 of 3 tests; 1 broken, 1 new, 1 removed, 1 unchanged"
        in table
    )
    assert "  not in the delta: 1 new: s2/fresh [m] new 1.000; 1 removed: s2/gone [m] old 0.500" in table
    markdown = render_comparison(comparison, "markdown")
    assert "| s | 0 of 1 | n/a | - | 1 changed |" in markdown
    assert "| s2 | 2 of 3 | -0.100 | 0.100 |" in markdown
