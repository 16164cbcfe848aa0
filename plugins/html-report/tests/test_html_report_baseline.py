"""The page against a baseline, with two targets (parsed, no browser): the baseline named as in the PR
comment, base score and Δ per test, the changes (new, definition changed, removed), cost and tokens,
the tests x targets matrix, and every run string escaped."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from agentv_ci.api import (
    BaselineSource,
    GateDecision,
    ReportOptions,
    RunSummary,
    TestResult,
    TokenUsage,
    compare_runs,
)
from agentv_ci_html_report import HtmlReporter

HOSTILE = '<img src=x onerror=alert(1)>"'
TARGETS = ("mini", HOSTILE)


def _result(test_id: str, target: str, score: float, *, fingerprint: str = "f", **kw: object) -> TestResult:
    verdict = "pass" if score >= 0.8 else "fail"
    status = "ok" if verdict == "pass" else "quality_failure"
    return TestResult(
        test_id,
        "shop",
        target,
        score,
        status,
        verdict=verdict,
        fingerprint=fingerprint,
        **kw,  # type: ignore[arg-type]
    )


def runs() -> tuple[RunSummary, RunSummary]:
    """(base, head): `refund` breaks on mini, `edited` changed definition, `dropped` removed,
    `added` new; every head row priced, with tokens."""
    base = [
        _result(test_id, target, 1.0, fingerprint="old" if test_id == "edited" else "f")
        for test_id in ("refund", "greeting", "edited", "dropped")
        for target in TARGETS
    ]
    head_scores = {"refund": (0.25, 0.85), "greeting": (1.0, 1.0), "edited": (1.0, 0.65), "added": (1.0, 1.0)}
    head = [
        _result(
            test_id,
            target,
            scores[index],
            fingerprint="new" if test_id == "edited" else "f",
            cost_usd=0.000125 if target == "mini" else 0.5,
            token_usage=TokenUsage(input=1000, output=200 + index),
        )
        for test_id, scores in head_scores.items()
        for index, target in enumerate(TARGETS)
    ]
    source = BaselineSource("artifact", name="agentv-ci-results", artifact_id=12, run_id=345,
                            run_url="https://github.com/o/r/actions/runs/345", commit="a" * 40)  # fmt: skip
    return RunSummary(results=base), RunSummary(results=head, baseline=source, spent_usd=2.75)


class Tables(HTMLParser):
    """Per section id, its table rows (header row first) as lists of cell texts; plus `p.baseline`'s
    text and every href."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: dict[str, list[list[str]]] = {}
        self.baseline = ""
        self.hrefs: list[str] = []
        self._section = ""
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._in_baseline = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.hrefs += [v or "" for k, v in attrs if k == "href"]
        if tag == "section":
            self._section = attributes.get("id") or ""
            self.sections[self._section] = []
        elif tag == "tr" and self._section:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []
        elif tag == "p" and "baseline" in (attributes.get("class") or "").split():
            self._in_baseline = True

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.sections[self._section].append(self._row)
            self._row = None
        elif tag == "p":
            self._in_baseline = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if self._in_baseline:
            self.baseline += data

    def rows(self, section: str) -> list[dict[str, str]]:
        header, *rows = self.sections[section]
        return [dict(zip(header, row, strict=True)) for row in rows]


def render(tmp_path: Path, head: RunSummary, options: dict[str, object]) -> tuple[str, Tables]:
    path = tmp_path / "report.html"
    HtmlReporter().write(head, ReportOptions(path=path, **options))  # type: ignore[arg-type]
    text = path.read_text(encoding="utf-8")
    page = Tables()
    page.feed(text)
    return text, page


def test_each_test_has_its_base_score_change_cost_and_tokens(tmp_path: Path) -> None:
    base, head = runs()
    _, page = render(tmp_path, head, {"baseline": base})  # no decision: compared here
    shown = {(r["Test"], r["Target"]): (r["Score"], r["Base"], r["Δ"], r["Cost"], r["Tokens"])
             for r in page.rows("results")}  # fmt: skip
    assert shown == {
        ("refund", "mini"): ("0.250", "1.000", "-0.750 broken", "$0.000125", "1,200"),
        ("refund", HOSTILE): ("0.850", "1.000", "-0.150 regressed", "$0.5000", "1,201"),
        ("greeting", "mini"): ("1.000", "1.000", "+0.000", "$0.000125", "1,200"),
        ("greeting", HOSTILE): ("1.000", "1.000", "+0.000", "$0.5000", "1,201"),
        ("edited", "mini"): ("1.000", "1.000", "definition changed", "$0.000125", "1,200"),
        ("edited", HOSTILE): ("0.650", "1.000", "definition changed", "$0.5000", "1,201"),
        ("added", "mini"): ("1.000", "–", "new", "$0.000125", "1,200"),
        ("added", HOSTILE): ("1.000", "–", "new", "$0.5000", "1,201"),
    }
    refund = next(r for r in page.rows("results") if r["Test"] == "refund" and r["Target"] == "mini")
    assert refund["Details"] == "vs baseline: 1.000 -> 0.250"  # the comparison's own evidence


def test_the_changes_list_new_changed_and_removed_tests(tmp_path: Path) -> None:
    base, head = runs()
    text, page = render(tmp_path, head, {"baseline": base})
    changes = [
        (r["Status"], r["Test"], r["Target"], r["Base"], r["Head"], r["Δ"]) for r in page.rows("changes")
    ]
    assert changes == [
        ("broken", "refund", "mini", "1.000", "0.250", "-0.750"),
        ("regressed", "refund", HOSTILE, "1.000", "0.850", "-0.150"),
        ("definition changed", "edited", HOSTILE, "1.000", "0.650", "–"),
        ("definition changed", "edited", "mini", "1.000", "1.000", "–"),
        ("new", "added", HOSTILE, "–", "1.000", "–"),
        ("new", "added", "mini", "–", "1.000", "–"),
        ("removed", "dropped", HOSTILE, "1.000", "–", "–"),
        ("removed", "dropped", "mini", "1.000", "–", "–"),
    ]
    assert "1 broken · 1 regressed · 2 definition changed · 2 new · 2 removed · 2 unchanged" in text


def test_the_suite_row_has_its_delta_and_the_run_its_cost_and_tokens(tmp_path: Path) -> None:
    base, head = runs()
    text, page = render(tmp_path, head, {"baseline": base})
    [suite] = page.rows("suites")
    assert suite["Δ vs baseline"].startswith("-0.225 ")  # (-0.75 - 0.15 + 0 + 0) / 4 matched
    assert suite["Δ vs baseline"].endswith(" over 4 of 8 tests")
    assert (suite["Cost"], suite["Tokens"]) == ("$2.00", "9,604")
    assert "spent $2.75" in text  # the run's bill (judges, a baseline re-run), not only its tests
    assert "9,604 tokens" in text


def test_two_targets_get_a_matrix_with_each_cells_score_and_change(tmp_path: Path) -> None:
    base, head = runs()
    _, page = render(tmp_path, head, {"baseline": base})
    assert page.sections["matrix"][0] == ["Suite", "Test", HOSTILE, "mini"]  # a target name is text
    rows = page.rows("matrix")
    cells = {r["Test"]: (r["mini"], r[HOSTILE]) for r in rows if r["Suite"] == "shop"}
    assert cells == {
        "added": ("1.000 new", "1.000 new"),
        "dropped": ("– removed (base 1.000)", "– removed (base 1.000)"),
        "edited": ("1.000 definition changed", "0.650 definition changed"),
        "greeting": ("1.000 +0.000", "1.000 +0.000"),
        "refund": ("0.250 -0.750 broken", "0.850 -0.150 regressed"),
    }
    totals = {r["Test"]: (r["mini"], r[HOSTILE]) for r in rows if r["Suite"] == "Total"}
    assert totals == {
        "pass rate": ("75% (3/4)", "75% (3/4)"),
        "mean score": ("0.812", "0.875"),
        "cost": ("$0.000500", "$2.00"),
        "tokens": ("4,800", "4,804"),
    }


def test_the_comparison_the_gates_made_is_the_one_shown(tmp_path: Path) -> None:
    base, head = runs()
    judged = compare_runs([r for r in base.results if r.test_id != "dropped"], head.results)
    decision = GateDecision(passed=False, exit_code=1, reasons=["regression"], comparison=judged)  # type: ignore[arg-type]
    _, page = render(tmp_path, head, {"decision": decision})  # no baseline given again
    assert "removed" not in {r["Status"] for r in page.rows("changes")}  # the gates' diff had none


def test_the_baseline_is_named_as_in_the_pr_comment(tmp_path: Path) -> None:
    base, head = runs()
    _, page = render(tmp_path, head, {"baseline": base})
    assert (
        page.baseline
        == f"Baseline: artifact agentv-ci-results (id 12) of workflow run 345, commit {'a' * 40}."
    )
    assert page.hrefs == ["https://github.com/o/r/actions/runs/345"]

    hostile = BaselineSource("artifact", name=HOSTILE, run_id=9, run_url="javascript:alert(1)//https://x")
    text, page = render(tmp_path, RunSummary(results=head.results, baseline=hostile), {"baseline": base})
    assert page.baseline == f"Baseline: artifact {HOSTILE} (id …) of workflow run 9.".replace(" (id …)", "")
    assert page.hrefs == [] and "<img" not in text  # not a link, and the name is text

    none = BaselineSource("none", reason="no artifact could be listed <b>(403)</b>")
    text, page = render(tmp_path, RunSummary(results=head.results, baseline=none), {})
    assert page.baseline == "No baseline: no artifact could be listed <b>(403)</b>."
    assert "<b>" not in text and "Base</th>" not in text and "changes" not in page.sections

    _, page = render(tmp_path, head, {})  # `report` without --baseline: named, but no deltas
    assert page.baseline == (
        f"Baseline (when the run was gated): artifact agentv-ci-results (id 12) of workflow run 345, "
        f"commit {'a' * 40}; not read again here, so no deltas."
    )


def test_one_target_and_no_baseline_add_no_matrix_and_no_delta_columns(tmp_path: Path) -> None:
    _, head = runs()
    one = RunSummary(results=[r for r in head.results if r.target == "mini"])
    _, page = render(tmp_path, one, {})
    assert "matrix" not in page.sections and "changes" not in page.sections
    assert page.sections["results"][0] == [
        "Outcome",
        "Suite",
        "Test",
        "Target",
        "Score",
        "Cost",
        "Tokens",
        "Details",
    ]
    assert page.baseline == ""
