"""The JUnit document junit-xml builds from a `RunSummary`: the reference the streamed writer
(`agentv_ci.reporting.junit`) must equal byte for byte.

What a case says (names, messages, bodies, properties) follows docs/reports.md through the shared
helpers of `reporting.details`; how it is written is junit-xml's: `TestSuite.build_xml_doc`, one
element per suite, serialised by ElementTree and indented with `ET.indent`. junit-xml's output is
then normalised the documented way, the same for every document (docs/reports.md, "JUnit XML"):

- what fails the Jenkins XSD is fixed: no `disabled` attribute, times as plain decimals (`_num`),
  a time for 0-second cases (junit-xml leaves it out);
- every attribute value has workflow commands broken (test reporters echo names to the job log);
- a carriage return in text is a character reference (a parser would turn a raw one into LF);
- the root `<testsuites>` is ours (junit-xml's `to_xml_report_string` pretty-prints through minidom
  and adds `disabled`): name, tests, failures, errors, time, under an XML declaration;
- a waived failure (quarantined or flaky) is junit-xml's `<failure>` renamed `<flakyFailure>`, its
  type the waiver's kind, not counted in `failures` (junit-xml has no such element).

junit-xml is a dev dependency only: nothing in `src/` imports it.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path

from junit_xml import TestCase, TestSuite

from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.model.waivers import Waiver
from agentv_ci.reporting.details import (
    REPORT,
    attempt_counts,
    attempts_text,
    failing_graders,
    failure_headline,
    failure_text,
    repo_relative,
)
from agentv_ci.results.attempts import aggregate_attempts
from agentv_ci.results.totals import outcome_of
from agentv_ci.security.redaction import excerpt
from agentv_ci.text_safety import clean_text, neutralise_workflow_commands

Waived = Mapping[tuple[str, str, str], Waiver]


def _num(value: float) -> str:
    return f"{value:.3f}" if value > 0 and math.isfinite(value) else "0.000"


def _seconds(result: TestResult) -> float:
    seconds = (result.duration_ms or 0.0) / 1000
    return seconds if seconds > 0 and math.isfinite(seconds) else 0.0


def _properties(result: TestResult, repo_root: Path) -> dict[str, str]:
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


def _stdout(result: TestResult) -> str | None:
    parts = []
    if result.input:
        parts.append("input:\n" + excerpt(result.input, REPORT.input))
    if result.output:
        parts.append("output:\n" + excerpt(result.output, REPORT.answer))
    return neutralise_workflow_commands("\n\n".join(parts)) or None


def _case(result: TestResult, summary: RunSummary, name: str, waiver: Waiver | None) -> TestCase:
    case = TestCase(
        name, classname=clean_text(result.suite), elapsed_sec=_seconds(result), stdout=_stdout(result)
    )
    outcome = outcome_of(result)
    if outcome == "failed":
        message = f"score {result.score:.3f} < threshold {result.threshold:.2f}"
        headline = failure_headline(result)
        if headline:
            message = f"{headline}; {message}"
        extra = attempts_text(result)
        if extra:
            message += f" ({extra})"
        parts = [failure_text(result, REPORT, separator="\n\n")] if failing_graders(result) else []
        if result.output:
            parts.append("output:\n" + excerpt(result.output, REPORT.answer))
        body = neutralise_workflow_commands("\n\n".join(parts))
        if waiver is not None:
            message = excerpt(f"{waiver.text}; {message}", REPORT.message)
        kind = waiver.kind if waiver is not None else "QualityFailure"
        case.add_failure_info(message=message, output=body, failure_type=kind)
    elif outcome == "error":
        error = clean_text(result.error or "execution error")
        first = error.splitlines()[0] if error.strip() else "execution error"
        case.add_error_info(
            message=excerpt(first, REPORT.message),
            output=neutralise_workflow_commands(excerpt(error, REPORT.error)),
            error_type=clean_text(result.failure_reason_code or result.failure_stage or "ExecutionError"),
        )
    elif outcome == "not_run":
        reason = "not run: budget exhausted" if summary.budget_exhausted else "not run"
        case.add_skipped_info(message=clean_text(result.error or reason))
    return case


def _suite(
    name: str, results: list[TestResult], summary: RunSummary, repo_root: Path, waived: Waived
) -> tuple[ET.Element, dict[str, float]]:
    properties = {"tool": f"{summary.tool} {summary.version}".strip()}
    if summary.dry_run:
        properties["dry_run"] = "true"
    cases: list[TestCase] = []
    waivers: list[Waiver | None] = []
    seen: dict[str, int] = {}
    for result in results:
        case_name = clean_text(f"{result.test_id} [{result.target}]")
        seen[case_name] = seen.get(case_name, 0) + 1
        if seen[case_name] > 1:
            case_name = f"{case_name} #{seen[case_name]}"
        for key, value in _properties(result, repo_root).items():
            properties[f"{case_name}.{key}"] = value
        waiver = waived.get((result.suite, result.test_id, result.target))
        waivers.append(waiver)
        cases.append(_case(result, summary, case_name, waiver))
    eval_paths = sorted({p for r in results if (p := repo_relative(r.eval_path, repo_root))})
    suite = TestSuite(
        clean_text(name),
        cases,
        timestamp=clean_text(summary.started_at) if summary.started_at else None,
        file=clean_text(eval_paths[0]) if len(eval_paths) == 1 else None,
        properties=properties,
    )
    element = suite.build_xml_doc()
    # The documented normalisation (module docstring).
    element.attrib.pop("disabled", None)
    seconds = sum(_seconds(r) for r in results)
    element.set("time", _num(seconds))
    for case_element, case, waiver in zip(element.iter("testcase"), cases, waivers, strict=True):
        case_element.set("time", _num(case.elapsed_sec or 0.0))
        for failure in case_element.iter("failure") if waiver is not None else ():
            failure.tag = "flakyFailure"  # a waiver only changes a failure
    failures = sum(1 for c in element.iter("testcase") if c.find("failure") is not None)
    element.set("failures", str(failures))
    errors = sum(1 for r in results if outcome_of(r) == "error")
    counts = {"tests": float(len(results)), "failures": float(failures), "errors": float(errors)}
    counts["time"] = seconds
    return element, counts


def junit_xml_document(summary: RunSummary, repo_root: Path, waived: Waived | None = None) -> str:
    """The JUnit document for `summary` as junit-xml writes it, normalised (module docstring)."""
    by_suite: dict[str, list[TestResult]] = {}
    for result in aggregate_attempts(summary.results):
        by_suite.setdefault(result.suite, []).append(result)
    root = ET.Element("testsuites", {"name": "agentv-ci"})
    totals = {"tests": 0.0, "failures": 0.0, "errors": 0.0, "time": 0.0}
    for suite_name in sorted(by_suite):
        results = sorted(by_suite[suite_name], key=lambda r: (r.test_id, r.target))
        element, counts = _suite(suite_name, results, summary, repo_root, waived or {})
        root.append(element)
        for key in totals:
            totals[key] += counts[key]
    root.set("tests", str(int(totals["tests"])))
    root.set("failures", str(int(totals["failures"])))
    root.set("errors", str(int(totals["errors"])))
    root.set("time", _num(totals["time"]))
    for element in root.iter():
        for key, value in element.attrib.items():
            element.set(key, neutralise_workflow_commands(value))
    ET.indent(root, space="  ")
    body = ET.tostring(root, encoding="unicode").replace("\r", "&#13;")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
