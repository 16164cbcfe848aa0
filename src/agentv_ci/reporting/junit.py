"""JUnit XML reporter (through junit-xml).

One `<testsuite>` per eval suite, one `<testcase>` per test x target (repeats aggregated into one
case; each case's score, threshold, attempt pass counts, cost and tokens go to the suite's
`<properties>` as `<case name>.<key>`, because the XSD allows no properties on a testcase).
`<failure>` for quality failures with the failing assertions, `<error>` for execution errors,
`<skipped>` for tests that did not run.
All text is sanitised first (junit-xml emits invalid XML for lone surrogates and keeps ANSI noise).

The output validates against Jenkins' `junit-10.xsd` extended with the optional testcase `file`/`line`
attributes (what mikepenz/action-junit-report and dorny/test-reporter read to annotate the eval file).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.plugins import ReportOptions
from agentv_ci.reporting.details import (
    attempt_counts,
    attempts_text,
    failing_graders,
    grader_failure_text,
    repo_relative,
)
from agentv_ci.reporting.totals import outcome_of
from agentv_ci.text_safety import clean_text, excerpt, neutralise_workflow_commands

__all__ = ["JunitReporter", "render_junit"]

_OUTPUT_LIMIT = 4000
_MESSAGE_LIMIT = 500


def _case_name(result: TestResult) -> str:
    return clean_text(f"{result.test_id} [{result.target}]")


def _case_properties(result: TestResult) -> dict[str, str]:
    props = {"score": f"{result.score:.4f}", "threshold": f"{result.threshold:.4f}"}
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


def _build_case(result: TestResult, summary: RunSummary, repo_root: Path, name: str) -> object:
    from junit_xml import TestCase

    case = TestCase(
        name,
        classname=clean_text(result.suite),
        elapsed_sec=(result.duration_ms or 0.0) / 1000,
        stdout=_system_out(result),
        file=repo_relative(result.eval_path, repo_root),
        line=result.line,
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


def render_junit(summary: RunSummary, repo_root: Path) -> str:
    """The JUnit document as a string (deterministic for a given summary)."""
    from junit_xml import TestSuite, to_xml_report_string

    by_suite: dict[str, list[TestResult]] = {}
    for result in summary.results:
        by_suite.setdefault(result.suite, []).append(result)
    suites = []
    for suite_name in sorted(by_suite):
        cases = []
        seen: dict[str, int] = {}
        suite_properties = {"tool": f"{summary.tool} {summary.version}".strip()}
        for result in sorted(by_suite[suite_name], key=lambda r: (r.test_id, r.target)):
            name = _case_name(result)
            seen[name] = seen.get(name, 0) + 1
            if seen[name] > 1:  # never emit duplicate names (readers treat them as retries)
                name = f"{name} #{seen[name]}"
            for key, value in _case_properties(result).items():
                suite_properties[f"{name}.{key}"] = value
            cases.append(_build_case(result, summary, repo_root, name))
        eval_paths = sorted({p for r in by_suite[suite_name] if (p := repo_relative(r.eval_path, repo_root))})
        suites.append(
            TestSuite(
                clean_text(suite_name),
                cases,
                timestamp=summary.started_at,
                file=eval_paths[0] if len(eval_paths) == 1 else None,
                properties=suite_properties,
            )
        )
    raw = to_xml_report_string(suites, prettyprint=False, encoding="utf-8")
    return _finish(raw)


def _finish(raw: str) -> str:
    """Drop attributes the XSD rejects, give every case a time, indent."""
    root = ET.fromstring(raw)
    root.set("name", "agentv-ci")
    root.attrib.pop("disabled", None)
    for suite in root.iter("testsuite"):
        suite.attrib.pop("disabled", None)
        for case in suite.iter("testcase"):
            case.set("time", f"{float(case.get('time') or 0):.3f}")  # junit-xml omits 0; readers want it
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


class JunitReporter:
    """Writes JUnit XML for test tabs (dorny/test-reporter, mikepenz/action-junit-report, GitLab, Jenkins)."""

    def write(self, summary: RunSummary, options: ReportOptions) -> None:
        options.path.write_text(render_junit(summary, options.repo_root), encoding="utf-8")
