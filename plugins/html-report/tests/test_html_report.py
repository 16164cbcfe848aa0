"""The HTML page as a document: structure, order, escaping, self-containment (parsed, no browser)."""

from __future__ import annotations

import base64
import hashlib
import re
import tomllib
from html.parser import HTMLParser
from pathlib import Path

from agentv_ci.api import (
    REPORTERS_NAMESPACE,
    AssertionResult,
    GraderResult,
    ReportOptions,
    RunSummary,
    TestResult,
    check_plugin,
)
from agentv_ci_html_report import HtmlReporter
from agentv_ci_html_report.charts import score_bins

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def _result(suite: str, test_id: str, score: float, status: str = "ok", **kw: object) -> TestResult:
    verdict = "pass" if status == "ok" and score >= 0.8 else "fail"
    execution = "quality_failure" if status == "ok" and verdict == "fail" else status
    return TestResult(test_id, suite, "default", score, execution, verdict=verdict, **kw)  # type: ignore[arg-type]


def summary() -> RunSummary:
    failing = GraderResult(
        "contains-Berlin",
        "contains",
        0.0,
        "fail",
        assertions=[AssertionResult('Output does not contain "Berlin"', False, "it said Bonn")],
    )
    return RunSummary(
        results=[
            _result("geo", "france", 1.0, output="Paris"),
            _result("geo", "germany", 0.0, scores=[failing], output=HOSTILE),
            _result("math", "sum", 0.9),
            _result("math", "product", 0.55),
            _result("math", "timeout", 0.0, status="execution_error", error="target timed out after 30s"),
        ],
        started_at="2026-01-02T03:04:05Z",
    )


class _Page(HTMLParser):
    """Rows of the results table, inline scripts/styles, and every URL-bearing attribute."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.inline: dict[str, list[str]] = {"script": [], "style": []}
        self.urls: list[str] = []
        self.csp = ""
        self._in: str | None = None
        self._section: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "section":
            self._section = attributes.get("id")
        if tag in ("script", "style"):
            self._in = tag
            self.inline[tag].append("")
        if tag == "meta" and attributes.get("http-equiv") == "Content-Security-Policy":
            self.csp = attributes.get("content") or ""
        if tag == "tr" and self._section == "results" and "class" in attributes:
            self.rows.append([])
        if tag == "td" and self._section == "results" and self.rows:
            self._cell = []
        self.urls += [v or "" for k, v in attrs if k in ("src", "href", "action") or k.startswith("on")]

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._in = None
        if tag == "td" and self._cell is not None:
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._in:
            self.inline[self._in][-1] += data
        if self._cell is not None:
            self._cell.append(data)


def _render(tmp_path: Path) -> tuple[str, _Page]:
    path = tmp_path / "report.html"
    HtmlReporter().write(summary(), ReportOptions(path=path))
    text = path.read_text()
    page = _Page()
    page.feed(text)
    return text, page


def test_meets_the_plugin_contract_and_is_registered() -> None:
    check_plugin("reporter", HtmlReporter)
    entry_points = tomllib.loads(PYPROJECT.read_text())["project"]["entry-points"]
    assert entry_points[REPORTERS_NAMESPACE]["html"] == "agentv_ci_html_report:HtmlReporter"


def test_failing_tests_come_first_then_errors_then_passes(tmp_path: Path) -> None:
    _, page = _render(tmp_path)
    assert [(row[0], row[1], row[2], row[4]) for row in page.rows] == [
        ("failed", "geo", "germany", "0.000"),
        ("failed", "math", "product", "0.550"),
        ("error", "math", "timeout", "0.000"),
        ("passed", "geo", "france", "1.000"),
        ("passed", "math", "sum", "0.900"),
    ]
    assert page.rows[0][-1].startswith('contains-Berlin: Output does not contain "Berlin" (it said Bonn)')
    assert page.rows[2][-1].startswith("target timed out after 30s")


def test_model_output_is_escaped_and_the_page_is_self_contained(tmp_path: Path) -> None:
    text, page = _render(tmp_path)
    assert HOSTILE not in text and "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in text
    assert len(page.inline["script"]) == 1 and len(page.inline["style"]) == 1
    assert page.urls == []  # no src/href/on* attributes at all: nothing is fetched
    assert not re.search(r"https?://", text.replace("http-equiv", ""))
    for kind, directive in (("script", "script-src"), ("style", "style-src")):
        digest = base64.b64encode(hashlib.sha256(page.inline[kind][0].encode()).digest()).decode()
        assert f"{directive} 'sha256-{digest}'" in page.csp  # the policy allows exactly these
    assert page.csp.startswith("default-src 'none';")


def test_each_suite_has_a_pass_rate_bar_and_a_score_histogram(tmp_path: Path) -> None:
    text, _ = _render(tmp_path)
    assert 'aria-label="pass rate of geo: 50%"' in text and 'aria-label="pass rate of math: 50%"' in text
    assert 'aria-label="score distribution of math: 2 score(s)"' in text  # errors are not scores
    assert "scores 0.5–0.6: 1 test(s)" in text and "scores 0.9–1.0: 1 test(s)" in text


def test_score_bins_put_1_in_the_last_bin() -> None:
    assert score_bins([0.0, 0.05, 0.1, 0.55, 0.99, 1.0]) == [2, 1, 0, 0, 0, 1, 0, 0, 0, 2]


def test_a_failed_check_shows_what_it_expected_and_what_came_back_escaped(tmp_path: Path) -> None:
    check = AssertionResult(
        "quantity (value mismatch)", False, expected="3", actual='"<img src=x onerror=alert(1)>"'
    )
    grader = GraderResult("fields", "field-accuracy", 0.5, "fail", assertions=[check])
    path = tmp_path / "report.html"
    HtmlReporter().write(
        RunSummary(results=[_result("shop", "order", 0.5, scores=[grader])]), ReportOptions(path=path)
    )
    text = path.read_text()
    page = _Page()
    page.feed(text)
    [row] = page.rows
    assert 'fields: quantity (value mismatch)expected: 3actual: "<img src=x onerror=alert(1)>"' in row[-1]
    assert "<img" not in text and page.urls == []
