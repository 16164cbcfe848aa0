"""JUnit XML reporter.

One `<testsuite>` per eval suite, one `<testcase>` per test x target (repeats aggregated into one
case; each case's score, threshold, attempt pass counts, cost and tokens go to the suite's
`<properties>` as `<case name>.<key>`, because the XSD allows no properties on a testcase).
`<failure>` for quality failures with the failing assertions, `<error>` for execution errors,
`<skipped>` for tests that did not run.
All text is sanitised first (lone surrogates, XML-illegal control characters, ANSI noise) and escaped
on the way out (attributes keep newlines as character references).

Built through junit-xml's element builder (`TestSuite.build_xml_doc`), then fixed in place where
the library's output fails the XSD (`disabled`, `repr(float)` times such as `1e-05`, no time for 0
seconds) and serialised once. Going through its string serialiser instead meant a re-parse and a
second serialisation (15 s for 100k results).

The output validates against the unmodified Jenkins `junit-10.xsd`: the XSD has no testcase
`file`/`line` attributes, so each case's eval file and line go to the suite's properties
(`<case name>.file`, `<case name>.line`) and the suite's `file` attribute when it has one eval file.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.plugins import ReportOptions
from agentv_ci.reporting.details import (
    attempt_counts,
    attempts_text,
    failing_graders,
    grader_failure_text,
    repo_relative,
)
from agentv_ci.reporting.gc_pause import paused_gc
from agentv_ci.reporting.results_file import aggregate_attempts
from agentv_ci.reporting.totals import outcome_of
from agentv_ci.text_safety import clean_text, excerpt, neutralise_workflow_commands

__all__ = ["JunitReporter", "render_junit"]

_OUTPUT_LIMIT = 4000
_MESSAGE_LIMIT = 500


def _case_name(result: TestResult) -> str:
    return clean_text(f"{result.test_id} [{result.target}]")


def _case_properties(result: TestResult, repo_root: Path) -> dict[str, str]:
    props = {"score": f"{result.score:.4f}", "threshold": f"{result.threshold:.4f}"}
    path = repo_relative(result.eval_path, repo_root)
    if path:
        props["file"] = clean_text(path)
    if result.line is not None and result.line >= 0:
        props["line"] = str(int(result.line))
    counts = attempt_counts(result)
    if counts is not None:
        props["passed_attempts"], props["total_attempts"] = str(counts[0]), str(counts[1])
    if result.cost_usd is not None:
        props["cost_usd"] = f"{result.cost_usd:.6f}"
    if result.token_usage is not None:
        props["tokens"] = str(result.token_usage.total)
    return props


def _failure_body(result: TestResult) -> str:
    parts = [grader_failure_text(g) for g in failing_graders(result)]
    if result.output:
        parts.append("output:\n" + excerpt(result.output, _OUTPUT_LIMIT))
    return neutralise_workflow_commands("\n\n".join(parts))


def _system_out(result: TestResult) -> str | None:
    parts = []
    if result.input:
        parts.append("input:\n" + excerpt(result.input, _OUTPUT_LIMIT))
    if result.output:
        parts.append("output:\n" + excerpt(result.output, _OUTPUT_LIMIT))
    return neutralise_workflow_commands("\n\n".join(parts)) or None


def _num(value: float) -> str:
    """Seconds as a plain decimal (the XSD's SUREFIRE_TIME rejects `1e-05`, negatives and NaN)."""
    return f"{value:.3f}" if value > 0 and math.isfinite(value) else "0.000"


def _seconds(result: TestResult) -> float:
    seconds = (result.duration_ms or 0.0) / 1000
    return seconds if seconds > 0 and math.isfinite(seconds) else 0.0


def _build_case(result: TestResult, summary: RunSummary, name: str) -> Any:
    from junit_xml import TestCase

    out = _system_out(result)
    case = TestCase(
        name, classname=clean_text(result.suite), elapsed_sec=_seconds(result), stdout=out or None
    )
    outcome = outcome_of(result)
    if outcome == "failed":
        message = f"score {result.score:.3f} < threshold {result.threshold:.2f}"
        extra = attempts_text(result)
        if extra:
            message += f" ({extra})"
        case.add_failure_info(message=message, output=_failure_body(result), failure_type="QualityFailure")
    elif outcome == "error":
        error = clean_text(result.error or "execution error")
        first = error.splitlines()[0] if error.strip() else "execution error"
        case.add_error_info(
            message=excerpt(first, _MESSAGE_LIMIT),
            output=neutralise_workflow_commands(excerpt(error, _OUTPUT_LIMIT)),
            error_type=clean_text(result.failure_reason_code or result.failure_stage or "ExecutionError"),
        )
    elif outcome == "not_run":
        reason = "not run: budget exhausted" if summary.budget_exhausted else "not run"
        case.add_skipped_info(message=clean_text(result.error or reason))
    return case


def _suite_element(
    name: str, results: list[TestResult], summary: RunSummary, repo_root: Path
) -> tuple[ET.Element, dict[str, float]]:
    from junit_xml import TestSuite

    properties = {"tool": f"{summary.tool} {summary.version}".strip()}
    if summary.dry_run:
        properties["dry_run"] = "true"  # placeholder answers: the scores say nothing about quality
    cases: list[Any] = []
    seen: dict[str, int] = {}
    counts = {"tests": 0.0, "failures": 0.0, "errors": 0.0, "time": 0.0}
    for result in sorted(results, key=lambda r: (r.test_id, r.target)):
        case_name = _case_name(result)
        seen[case_name] = seen.get(case_name, 0) + 1
        if seen[case_name] > 1:  # never emit duplicate names (readers treat them as retries)
            case_name = f"{case_name} #{seen[case_name]}"
        for key, value in _case_properties(result, repo_root).items():
            properties[f"{case_name}.{key}"] = value
        cases.append(_build_case(result, summary, case_name))
        outcome = outcome_of(result)
        counts["tests"] += 1
        counts["failures"] += outcome == "failed"
        counts["errors"] += outcome == "error"
        counts["time"] += _seconds(result)
    eval_paths = sorted({p for r in results if (p := repo_relative(r.eval_path, repo_root))})
    suite = TestSuite(
        clean_text(name),
        cases,
        timestamp=clean_text(summary.started_at) if summary.started_at else None,
        file=clean_text(eval_paths[0]) if len(eval_paths) == 1 else None,
        properties=properties,
    )
    element = suite.build_xml_doc()
    # junit-xml writes `disabled` (the XSD rejects it), repr() times and no time for 0 seconds.
    element.attrib.pop("disabled", None)
    element.set("time", _num(counts["time"]))
    for case_element, case in zip(element.iter("testcase"), cases, strict=True):
        case_element.set("time", _num(case.elapsed_sec or 0.0))
    return element, counts


def render_junit(summary: RunSummary, repo_root: Path) -> str:
    """The JUnit document as a string (deterministic for a given summary).

    Built with junit-xml's `TestSuite.build_xml_doc` (an ElementTree element per suite), fixed up
    in place where junit-xml's output would fail the XSD, and serialised once.
    """
    with paused_gc():  # many small containers, no cycles: see gc_pause
        return _render(summary, repo_root)


def _render(summary: RunSummary, repo_root: Path) -> str:
    by_suite: dict[str, list[TestResult]] = {}
    for result in aggregate_attempts(summary.results):  # one case per test x target
        by_suite.setdefault(result.suite, []).append(result)
    root = ET.Element("testsuites", {"name": "agentv-ci"})
    totals = {"tests": 0.0, "failures": 0.0, "errors": 0.0, "time": 0.0}
    for suite_name in sorted(by_suite):
        element, counts = _suite_element(suite_name, by_suite[suite_name], summary, repo_root)
        root.append(element)
        for key in totals:
            totals[key] += counts[key]
    root.set("tests", str(int(totals["tests"])))
    root.set("failures", str(int(totals["failures"])))
    root.set("errors", str(int(totals["errors"])))
    root.set("time", _num(totals["time"]))
    ET.indent(root, space="  ")
    # ElementTree escapes CR in attributes but not in text, where every parser would turn it into LF.
    body = ET.tostring(root, encoding="unicode").replace("\r", "&#13;")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


class JunitReporter:
    """Writes JUnit XML for test tabs (dorny/test-reporter, mikepenz/action-junit-report, GitLab, Jenkins)."""

    def write(self, summary: RunSummary, options: ReportOptions) -> None:
        options.path.write_text(render_junit(summary, options.repo_root), encoding="utf-8")
