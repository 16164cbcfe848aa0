from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema

from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.plugins import ReportOptions
from agentv_ci.reporting import spooled_text
from agentv_ci.reporting.junit import JunitReporter, render_junit
from tests.reporting.golden import FAKE_REPO, assert_golden
from tests.reporting.sample_runs import sample_summary

SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"
EXTENDED_XSD = SCHEMAS / "junit-10-agentv.xsd"


def test_junit_matches_golden() -> None:
    assert_golden("junit.xml", render_junit(sample_summary(FAKE_REPO), FAKE_REPO))


def test_junit_validates_against_extended_xsd() -> None:
    if not EXTENDED_XSD.is_file():
        pytest.skip(f"schema not vendored at {EXTENDED_XSD}")
    schema = xmlschema.XMLSchema(str(EXTENDED_XSD))
    errors = list(schema.iter_errors(render_junit(sample_summary(FAKE_REPO), FAKE_REPO)))
    assert errors == []


def test_junit_validates_against_the_upstream_schema() -> None:
    # The bar is the unmodified ../shared/schemas/junit-10.xsd: no testcase `file`/`line`
    # attributes (the location goes to the suite properties instead).
    original = SCHEMAS / "junit-10.xsd"  # unmodified copy of ../shared/schemas/junit-10.xsd
    if not original.is_file():
        pytest.skip(f"upstream schema absent at {original}")
    schema = xmlschema.XMLSchema(str(original))
    errors = list(schema.iter_errors(render_junit(sample_summary(FAKE_REPO), FAKE_REPO)))
    assert [str(e.reason) for e in errors] == []


def _suite_props(root: ET.Element) -> dict[str | None, str | None]:
    return {p.get("name"): p.get("value") for p in root.iter("property")}


def test_one_case_per_test_and_target_with_outcomes() -> None:
    root = ET.fromstring(render_junit(sample_summary(FAKE_REPO), FAKE_REPO))
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert sorted(suites) == ["math", "smoke"]
    math = suites["math"]
    assert (math.get("tests"), math.get("failures"), math.get("errors"), math.get("skipped")) == (
        "4",
        "1",
        "1",
        "1",
    )
    cases = {c.get("name"): c for c in math.iter("testcase")}
    assert sorted(cases) == ["adds [mock]", "flaky-math [mock]", "later [mock]", "timeout [mock]"]
    assert cases["timeout [mock]"].find("error").get("type") == "timeout"
    assert cases["later [mock]"].find("skipped").get("message") == "not run: budget exhausted"
    flaky = cases["flaky-math [mock]"]
    props = {p.get("name"): p.get("value") for p in math.find("properties").iter("property")}
    assert (props["flaky-math [mock].passed_attempts"], props["flaky-math [mock].total_attempts"]) == (
        "3",
        "5",
    )
    assert flaky.find("properties") is None  # the XSD allows no properties on a testcase
    assert "3/5 attempts passed" in flaky.find("failure").get("message")
    assert flaky.get("file") is None and flaky.get("line") is None  # not in the XSD
    assert props["flaky-math [mock].file"] == "evals/math.eval.yaml"
    assert props["flaky-math [mock].line"] == "3"


def test_failure_lists_failing_assertions_and_sanitises_model_text() -> None:
    xml = render_junit(sample_summary(FAKE_REPO), FAKE_REPO)
    root = ET.fromstring(xml)  # parses: no lone surrogate or control character survived
    case = next(c for c in root.iter("testcase") if c.get("name") == "refund-policy [mock]")
    body = case.find("failure").text or ""
    assert "contains 'refund' - not found in answer" in body
    assert "[required]" in body
    assert "\x1b" not in xml and "[31m" not in xml and "\x00" not in xml
    assert _suite_props(root)["refund-policy [mock].file"] == "evals/smoke.eval.yaml"


def test_per_attempt_rows_become_one_case_with_pass_counts() -> None:
    # AgentV writes one row per attempt: a test tab must show one case, not three duplicates
    rows = [
        TestResult("same", "s", "t", score, status, verdict=verdict, attempt=i)  # type: ignore[arg-type]
        for i, (score, status, verdict) in enumerate(
            [(1.0, "ok", "pass"), (0.0, "quality_failure", "fail"), (1.0, "ok", "pass")]
        )
    ]
    root = ET.fromstring(render_junit(RunSummary(rows), FAKE_REPO))
    (case,) = root.iter("testcase")
    assert case.get("name") == "same [t]"
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert (props["same [t].passed_attempts"], props["same [t].total_attempts"]) == ("2", "3")


def test_names_that_collide_after_cleaning_stay_unique() -> None:
    rows = [TestResult(f"same{c}", "s", "t", 1.0, "ok", verdict="pass") for c in ("", "\x00", "\x1b[0m")]
    root = ET.fromstring(render_junit(RunSummary(rows), FAKE_REPO))
    names = [c.get("name") for c in root.iter("testcase")]
    assert names == ["same [t]", "same [t] #2", "same [t] #3"]


def test_suite_times_always_match_the_xsd_time_pattern() -> None:
    # SUREFIRE_TIME rejects "1e-05" and negative numbers (a float's repr, a clock going backwards)
    rows = [
        TestResult("tiny", "s", "t", 1.0, "ok", verdict="pass", duration_ms=0.01),
        TestResult("negative", "s", "t", 1.0, "ok", verdict="pass", duration_ms=-5.0),
        TestResult("nan", "s2", "t", 1.0, "ok", verdict="pass", duration_ms=float("nan")),
    ]
    xml = render_junit(RunSummary(rows), FAKE_REPO)
    schema = xmlschema.XMLSchema(str(EXTENDED_XSD))
    assert [str(e.reason) for e in schema.iter_errors(xml)] == []
    root = ET.fromstring(xml)
    assert [s.get("time") for s in root.iter("testsuite")] == ["0.000", "0.000"]


def test_attributes_keep_newlines_and_text_keeps_carriage_returns() -> None:
    row = TestResult("t", "s", "m", 0.0, "execution_error", error="line one\r\nline two\rthree")
    root = ET.fromstring(render_junit(RunSummary([row]), FAKE_REPO))
    error = next(root.iter("error"))
    assert error.get("message") == "line one"
    assert error.text == "line one\r\nline two\rthree"


def test_reporter_plugin_writes_file(tmp_path: Path) -> None:
    out = tmp_path / "junit.xml"
    JunitReporter().write(sample_summary(tmp_path), ReportOptions(path=out, repo_root=tmp_path))
    root = ET.parse(out).getroot()
    assert root.tag == "testsuites" and root.get("tests") == "6"
    case = next(c for c in root.iter("testcase") if c.get("name") == "greets [mock]")
    assert case is not None
    # absolute eval path made repo-relative
    assert _suite_props(root)["greets [mock].file"] == "evals/smoke.eval.yaml"


def test_reader_invariants_hold() -> None:
    # dorny/test-reporter and GitLab: non-empty names, unique classname+name, numeric time, counts = children
    root = ET.fromstring(render_junit(sample_summary(FAKE_REPO), FAKE_REPO))
    total = 0
    for suite in root.iter("testsuite"):
        cases = suite.findall("testcase")
        total += len(cases)
        assert (suite.get("name") or "").strip()
        assert int(suite.get("tests") or -1) == len(cases)
        assert int(suite.get("failures") or -1) == sum(1 for c in cases if c.find("failure") is not None)
        assert int(suite.get("errors") or -1) == sum(1 for c in cases if c.find("error") is not None)
        assert int(suite.get("skipped") or -1) == sum(1 for c in cases if c.find("skipped") is not None)
        keys = [(c.get("classname"), c.get("name")) for c in cases]
        assert len(set(keys)) == len(keys)
        for case in cases:
            float(case.get("time") or "x")
    assert int(root.get("tests") or -1) == total


def test_dry_run_is_marked_in_every_suite() -> None:
    rows = [TestResult("a", "s", "m", 1.0, "ok", verdict="pass", dry_run=True)]
    root = ET.fromstring(render_junit(RunSummary(rows, dry_run=True), FAKE_REPO))
    assert _suite_props(root)["dry_run"] == "true"
    real = ET.fromstring(render_junit(RunSummary([TestResult("a", "s", "m", 1.0, "ok")]), FAKE_REPO))
    assert "dry_run" not in _suite_props(real)


@pytest.mark.parametrize("linesep", ["\n", "\r\n"])
def test_the_reporters_file_holds_the_documents_bytes_as_a_text_file_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, linesep: str
) -> None:
    """The reporter writes the spooled bytes as they are: UTF-8, each newline as the platform's
    (what `open(path, "w", encoding="utf-8")` would write), spooled parts past their memory too."""
    monkeypatch.setattr(spooled_text, "SPOOL_BYTES", 64)  # every part goes through a temporary file
    monkeypatch.setattr(spooled_text.os, "linesep", linesep)
    summary = sample_summary(FAKE_REPO)
    out = tmp_path / "junit.xml"
    JunitReporter().write(summary, ReportOptions(path=out, repo_root=FAKE_REPO))
    assert out.read_bytes() == render_junit(summary, FAKE_REPO).replace("\n", linesep).encode("utf-8")
