"""JUnit XML reporter.

One `<testsuite>` per eval suite, one `<testcase>` per test x target (repeats aggregated into one
case; each case's score, threshold, attempt pass counts, cost and tokens go to the suite's
`<properties>` as `<case name>.<key>`, because the XSD allows no properties on a testcase).
`<failure>` for quality failures with the failing assertions, `<error>` for execution errors,
`<skipped>` for tests that did not run.
A failure the gates waived (a test quarantined or labelled flaky, `GateDecision.waived`) is a
Surefire `<flakyFailure type="quarantined|flaky">` in place of the `<failure>`, not counted in the
suite's `failures`: viewers that know the element show the test as flaky, the others as passed,
none as failed (docs/reports.md). An expired quarantine blocks, so it stays a `<failure>`.
All text is sanitised first (lone surrogates, XML-illegal control characters, ANSI noise) and escaped
on the way out (attributes keep newlines as character references).

The document is written as a stream, case by case, in the order of the results' keys (suite, test
id, target; a run's rows are sorted on disk, `stored_results`), so its size never costs memory: each
suite's properties and cases, and the body under the root (whose totals come last), go through
spooled temporary files. A run's own passing rows (most) are read without their grader results and
written by a shorter path (`_SuiteWriter.add_passed`), to the same bytes.
The bytes are those of junit-xml's element builder serialised by
ElementTree and indented with `ET.indent`, with what fails the XSD fixed: no `disabled`, plain
decimal times (`1e-05` is refused), a time for 0 seconds. junit-xml is not imported here (it is a
dev dependency): it is the tests' oracle, which holds the bytes to it (tests/reporting/junit_oracle.py
lists the normalisations), as the golden test holds them to earlier versions.

The output validates against the unmodified Jenkins `junit-10.xsd`: the XSD has no testcase
`file`/`line` attributes, so each case's eval file and line go to the suite's properties
(`<case name>.file`, `<case name>.line`) and the suite's `file` attribute when it has one eval file.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import IO

from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.model.waivers import Waiver
from agentv_ci.plugins import ReportOptions
from agentv_ci.reporting.details import (
    REPORT,
    attempt_counts,
    attempts_text,
    failing_graders,
    failure_headline,
    failure_text,
    repo_relative,
)
from agentv_ci.reporting.spooled_text import SpooledText, Utf8File
from agentv_ci.results.gc_pause import paused_gc
from agentv_ci.results.passed_rows import PassedRow
from agentv_ci.results.stored_results import passed_or_aggregated_in_key_order
from agentv_ci.results.totals import outcome_of
from agentv_ci.security.redaction import SECRETS, excerpt
from agentv_ci.text_safety import clean_text, neutralise_workflow_commands

__all__ = ["JunitReporter", "render_junit"]

# (suite, test id, target) -> the waiver that kept the test's failure from blocking
Waived = Mapping[tuple[str, str, str], Waiver]

LIMITS = REPORT  # how much of a test's text a testcase holds (reporting.details, for every report)

# A case name without these characters is left as it is by `clean_text` and `_attr` (a workflow
# command needs a `:` or a `#`): one scan for the common name, the full treatment for the others.
_NAME_WORK = re.compile('[&<>"\x00-\x1f\x7f\ufffe\uffff\ud800-\udfff:#]')
# An input or answer without these characters is left as it is by `clean_text`, `_text` and, joined
# under our `input:` and `output:` lines, by `neutralise_workflow_commands` (which needs a `:` or `#`).
_OUT_WORK = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff\ud800-\udfff&<>\r:#]")


def _case_name(result: TestResult) -> str:
    return clean_text(f"{result.test_id} [{result.target}]")


@lru_cache(maxsize=256)
def _cached_four_places(value: float) -> str:
    return f"{value:.4f}"


def _four_places(value: float) -> str:
    """`f"{value:.4f}"`: a run's scores and thresholds are few values, formatted once each. Equal
    floats print alike, but for 0.0 and -0.0 (equal keys of the cache): zeros are not cached."""
    return _cached_four_places(value) if value else f"{value:.4f}"


def _property_lines(prefix: str, result: TestResult | PassedRow, file: str | None) -> str:
    """The case's `<property>` lines, values escaped for an attribute (`prefix`: the line up to the
    case's escaped name and its dot). `file`: `_file_value` of the result's eval path relative to the
    repository (`repo_relative`)."""
    text = _head_properties(prefix, result, file)
    line = result.line
    if line is not None and line >= 0:
        text += f'{prefix}line" value="{int(line)}" />\n'
    return text + _tail_properties(prefix, result)


def _head_properties(prefix: str, result: TestResult | PassedRow, file: str | None) -> str:
    """The property lines before the case's line: score, threshold and file."""
    text = f'{prefix}score" value="{_four_places(result.score)}" />\n'
    text += f'{prefix}threshold" value="{_four_places(result.threshold)}" />\n'
    if file is not None:
        text += f'{prefix}file" value="{file}" />\n'
    return text


def _tail_properties(prefix: str, result: TestResult | PassedRow) -> str:
    """The property lines after the case's line: attempts, cost and tokens."""
    text = ""
    counts = attempt_counts(result) if isinstance(result, TestResult) else None  # a PassedRow: one attempt
    if counts is not None:
        passed, total = counts
        text += f'{prefix}passed_attempts" value="{passed}" />\n{prefix}total_attempts" value="{total}" />\n'
    if result.cost_usd is not None:
        text += f'{prefix}cost_usd" value="{result.cost_usd:.6f}" />\n'
    if result.token_usage is not None:
        text += f'{prefix}tokens" value="{result.token_usage.total}" />\n'
    return text


# Where a case's escaped name goes in a `_PassedProperties` template: cleaning removes it from names.
_HOLE = "\x00"


class _PassedProperties:
    """The property lines of a suite's passing cases, from a template kept while the values that are
    the same for most of them (score, threshold, file, cost, tokens) stay the same: a case fills in
    its name and line only."""

    def __init__(self) -> None:
        self._key: tuple[object, ...] | None = None
        self._head: list[str] = []
        self._tail: list[str] = []

    def lines(self, escaped: str, row: PassedRow, file: str | None) -> str:
        """`_property_lines` of `row` for the case named `escaped` (escaped already)."""
        score, threshold, cost = row.score, row.threshold, row.cost_usd
        key = (score, threshold, file, cost, row.token_usage)
        # 0.0 and -0.0 are equal keys that print differently: a zero is never taken from the template
        if key != self._key or not score or not threshold or cost == 0:
            prefix = f'      <property name="{_HOLE}.'
            self._head = _head_properties(prefix, row, file).split(_HOLE)
            self._tail = _tail_properties(prefix, row).split(_HOLE)
            self._key = key
        text = escaped.join(self._head)
        line = row.line
        if line is not None and line >= 0:
            text += f'      <property name="{escaped}.line" value="{line}" />\n'
        tail = self._tail
        return text + escaped.join(tail) if len(tail) > 1 else text


def _failure_body(result: TestResult) -> str:
    parts = [failure_text(result, LIMITS, separator="\n\n")] if failing_graders(result) else []
    if result.output:
        parts.append("output:\n" + excerpt(result.output, LIMITS.answer))
    return neutralise_workflow_commands("\n\n".join(parts))


def _system_out(result: TestResult | PassedRow) -> str | None:
    parts = []
    if result.input:
        parts.append("input:\n" + excerpt(result.input, LIMITS.input))
    if result.output:
        parts.append("output:\n" + excerpt(result.output, LIMITS.answer))
    return neutralise_workflow_commands("\n\n".join(parts)) or None


def _passed_system_out(row: PassedRow, secrets: bool) -> str | None:
    """`_text(_system_out(row))`: the common input and answer (short, nothing to clean, break or
    escape, no secret known: `secrets` says whether one is) joined as they are, the others as
    `_system_out` says."""
    given, answer = row.input, row.output
    if (
        secrets  # `excerpt` masks them
        or (given and (len(given) > LIMITS.input or _OUT_WORK.search(given) is not None))
        or (answer and (len(answer) > LIMITS.answer or _OUT_WORK.search(answer) is not None))
    ):
        out = _system_out(row)
        return _text(out) if out else None
    if given and answer:
        return f"input:\n{given}\n\noutput:\n{answer}"
    if given:
        return "input:\n" + given
    return "output:\n" + answer if answer else None


def _num(value: float) -> str:
    """Seconds as a plain decimal (the XSD's SUREFIRE_TIME rejects `1e-05`, negatives and NaN)."""
    return f"{value:.3f}" if value > 0 and math.isfinite(value) else "0.000"


def _seconds(result: TestResult | PassedRow) -> float:
    seconds = (result.duration_ms or 0.0) / 1000
    return seconds if seconds > 0 and math.isfinite(seconds) else 0.0


def _text(text: str) -> str:
    """Element text escaped as ElementTree escapes it, carriage returns as references (every parser
    would turn a raw CR into LF)."""
    if "&" in text:
        text = text.replace("&", "&amp;")
    if "<" in text:
        text = text.replace("<", "&lt;")
    if ">" in text:
        text = text.replace(">", "&gt;")
    if "\r" in text:
        text = text.replace("\r", "&#13;")
    return text


def _attr(text: str) -> str:
    """An attribute value escaped as ElementTree escapes it: as text, and quotes, newlines and tabs as
    references too (a parser normalises raw ones in attributes to spaces). Workflow commands (`::` at
    a line start, `##[` anywhere) are broken first: test reporters echo names and messages to the log."""
    text = _text(neutralise_workflow_commands(text))
    if '"' in text:
        text = text.replace('"', "&quot;")
    if "\n" in text:
        text = text.replace("\n", "&#10;")
    if "\t" in text:
        text = text.replace("\t", "&#09;")
    return text


def _start(tag: str, attributes: Iterable[tuple[str, str]]) -> str:
    return "<" + tag + "".join(f' {name}="{_attr(value)}"' for name, value in attributes)


def _leaf(tag: str, attributes: Iterable[tuple[str, str]], text: str | None) -> str:
    """An element without children: `<tag ... />`, or with its text."""
    if text:
        return _start(tag, attributes) + ">" + _text(text) + "</" + tag + ">"
    return _start(tag, attributes) + " />"


def _file_value(path: str | None) -> str | None:
    """A `file` property's value: the path cleaned and escaped; None for none (no property)."""
    return _attr(clean_text(path)) if path else None


def _classname(suite: str) -> str:
    """A case's `classname` attribute (its suite), escaped; "" for none."""
    classname = clean_text(suite)
    return f' classname="{_attr(classname)}"' if classname else ""


def _case(
    result: TestResult, summary: RunSummary, name: str, waiver: Waiver | None, outcome: str, classname: str
) -> tuple[str, str]:
    """The `<testcase>` element (indented as the 3rd level) and its outcome for the suite's counts:
    "failure", "error", "skipped" or "" (a waived failure: a `<flakyFailure>`, not counted).
    `name`: the case name, escaped already (`_attr`); `outcome`: `outcome_of(result)`; `classname`:
    `_classname(result.suite)` (the same for every case of a suite)."""
    seconds = _seconds(result)
    # `_start("testcase", ...)` spelled out (once per case): only the name and class are text to escape
    start = f'<testcase name="{name}"'
    if seconds:
        start += f' time="{_num(seconds)}"'
    start += classname
    if not seconds:
        start += ' time="0.000"'
    children: list[str] = []
    counted = ""
    if outcome == "failed":
        message = f"score {result.score:.3f} < threshold {result.threshold:.2f}"
        headline = failure_headline(result)
        if headline:
            message = f"{headline}; {message}"
        extra = attempts_text(result)
        if extra:
            message += f" ({extra})"
        output = _failure_body(result)
        if waiver is not None:
            # type first, as junit-xml orders a `<failure>`'s attributes (tests/reporting/junit_oracle.py)
            pairs = [("type", waiver.kind), ("message", excerpt(f"{waiver.text}; {message}", LIMITS.message))]
            children.append(_leaf("flakyFailure", pairs, output))
        else:
            children.append(_leaf("failure", [("type", "QualityFailure"), ("message", message)], output))
            counted = "failure"
    elif outcome == "error":
        error = clean_text(result.error or "execution error")
        first = error.splitlines()[0] if error.strip() else "execution error"
        message = excerpt(first, LIMITS.message)
        output = neutralise_workflow_commands(excerpt(error, LIMITS.error))
        kind = clean_text(result.failure_reason_code or result.failure_stage or "ExecutionError")
        if message or output:
            pairs = [("type", kind or "error")]
            if message:
                pairs.append(("message", message))
            children.append(_leaf("error", pairs, output))
            counted = "error"
    elif outcome == "not_run":
        reason = "not run: budget exhausted" if summary.budget_exhausted else "not run"
        message = clean_text(result.error or reason)
        pairs = [("type", "skipped")]
        if message:
            pairs.append(("message", message))
        children.append(_leaf("skipped", pairs, None))
        counted = "skipped"
    out = _system_out(result)
    if out:  # `_leaf("system-out", [], out)` spelled out
        children.append("<system-out>" + _text(out) + "</system-out>")
    if not children:
        return "    " + start + " />\n", counted
    inner = "\n      " + "\n      ".join(children)
    return "    " + start + ">" + inner + "\n    </testcase>\n", counted


class _SuiteWriter:
    """One `<testsuite>`: its properties and cases are spooled as they come, then written out
    behind the suite's start tag (whose counts are known only at the end)."""

    def __init__(
        self, name: str, summary: RunSummary, repo_root: Path, risky_names: set[str], waived: Waived
    ) -> None:
        self.name = name
        self.waived = waived
        self.summary = summary
        self.repo_root = repo_root
        self.risky_names = risky_names  # names that may collide with another case's (see _case_names)
        self.properties = SpooledText()
        self.cases = SpooledText()
        self.seen: dict[str, int] = {}
        self.counts = {"tests": 0.0, "failures": 0.0, "errors": 0.0, "time": 0.0}
        self.tests = self.failed = self.errored = self.skipped = 0
        self.eval_path: str | None = None
        self.eval_paths = 0  # distinct eval paths seen (stops counting at 2)
        # The last eval path, made relative, and that path as a `file` property's escaped value.
        self._relative: tuple[str | None, str | None, str | None] = (None, None, None)
        self._classnames: tuple[str, str] = (name, _classname(name))  # a suite's rows name the suite
        self._passed_properties = _PassedProperties()
        self._secrets = bool(SECRETS)  # none is added while the report is written
        tool = f"{summary.tool} {summary.version}".strip()
        self._property("tool", tool)
        if summary.dry_run:
            self._property("dry_run", "true")  # placeholder answers: the scores say nothing about quality

    def _property(self, name: str, value: str) -> None:
        self.properties.write(f'      <property name="{_attr(name)}" value="{_attr(value)}" />\n')

    def _numbered(self, case_name: str) -> str:
        """`case_name`, or its `#N` form when it is the Nth case of the suite so named: only risky
        names can repeat, so only these are counted (readers take a repeated name for a retry)."""
        if case_name in self.risky_names:
            seen = self.seen[case_name] = self.seen.get(case_name, 0) + 1
            if seen > 1:
                return f"{case_name} #{seen}"
        return case_name

    def _classname_of(self, suite: str) -> str:
        """The `classname` attribute of a case of `suite` (escaped once for the suite's own name)."""
        own, classname = self._classnames
        return classname if suite == own else _classname(suite)

    def _saw_path(self, path: str | None) -> None:
        """Count a case's eval path (relative), up to two distinct ones: the suite's `file` needs one."""
        if path and self.eval_paths < 2 and path != self.eval_path:
            self.eval_paths += 1
            self.eval_path = path

    def add(self, result: TestResult) -> None:
        case_name = self._numbered(_case_name(result))
        path, file_value = self._repo_relative(result.eval_path)
        escaped = _attr(case_name)
        self.properties.write(_property_lines(f'      <property name="{escaped}.', result, file_value))
        waiver = self.waived.get((result.suite, result.test_id, result.target)) if self.waived else None
        outcome = outcome_of(result)
        classname = self._classname_of(result.suite)
        text, counted = _case(result, self.summary, escaped, waiver, outcome, classname)
        self.cases.write(text)
        self.tests += 1
        self.failed += counted == "failure"
        self.errored += counted == "error"
        self.skipped += counted == "skipped"
        counts = self.counts
        counts["failures"] += counted == "failure"
        counts["errors"] += outcome == "error"
        counts["time"] += _seconds(result)
        self._saw_path(path)

    def add_passed(self, row: PassedRow) -> None:
        """`add` for a passing single-attempt row (most of a run's): no waiver applies, and a name
        and texts that need no cleaning nor escaping (most) are written as they are."""
        case_name = f"{row.test_id} [{row.target}]"
        if _NAME_WORK.search(case_name) is None and case_name not in self.risky_names:
            escaped = case_name  # nothing to clean nor escape, and no other case is so named
        else:
            escaped = self._escaped_name(case_name)
        eval_path = row.eval_path
        relative = self._relative
        if eval_path != relative[0] or eval_path is None:
            relative = self._relative_of(eval_path)
        self.properties.write(self._passed_properties.lines(escaped, row, relative[2]))
        classname = self._classnames[1] if row.suite == self.name else _classname(row.suite)
        seconds = _seconds(row) if row.duration_ms else 0.0  # most dry-run cases take no time
        if seconds:
            start = f'    <testcase name="{escaped}" time="{_num(seconds)}"{classname}'
            self.counts["time"] += seconds  # a sum of positive seconds: adding a zero changes nothing
        else:
            start = f'    <testcase name="{escaped}"{classname} time="0.000"'
        out = _passed_system_out(row, self._secrets)
        if out:
            self.cases.write(f"{start}>\n      <system-out>{out}</system-out>\n    </testcase>\n")
        else:
            self.cases.write(start + " />\n")
        self.tests += 1
        path = relative[1]
        if path != self.eval_path:
            self._saw_path(path)

    def _escaped_name(self, case_name: str) -> str:
        """A passing case's name cleaned, numbered and escaped, as `add` does."""
        plain = _NAME_WORK.search(case_name) is None
        if not plain:
            case_name = clean_text(case_name)
        numbered = self._numbered(case_name)
        if numbered != case_name:
            case_name, plain = numbered, False
        return case_name if plain else _attr(case_name)

    def _repo_relative(self, eval_path: str | None) -> tuple[str | None, str | None]:
        """`repo_relative` of `eval_path` and its `file` property's value (`_file_value`), worked out
        once for a run of rows with the same one (a suite's rows)."""
        relative = self._relative
        if eval_path != relative[0] or eval_path is None:
            relative = self._relative_of(eval_path)
        return relative[1], relative[2]

    def _relative_of(self, eval_path: str | None) -> tuple[str | None, str | None, str | None]:
        """`eval_path`, made relative and as a `file` value, kept as the last one seen."""
        path = repo_relative(eval_path, self.repo_root)
        self._relative = (eval_path, path, _file_value(path))
        return self._relative

    def write_to(self, out: IO[str] | SpooledText) -> None:
        self.counts["tests"] = float(self.tests)  # every case added counts once
        summary = self.summary
        attributes = [
            ("errors", str(self.errored)),
            ("failures", str(self.failed)),
            ("name", clean_text(self.name)),
            ("skipped", str(self.skipped)),
            ("tests", str(self.tests)),
            ("time", _num(self.counts["time"])),
        ]
        timestamp = clean_text(summary.started_at) if summary.started_at else None
        if timestamp:
            attributes.append(("timestamp", timestamp))
        file = clean_text(self.eval_path) if self.eval_paths == 1 and self.eval_path else None
        if file:
            attributes.append(("file", file))
        out.write("  " + _start("testsuite", attributes) + ">\n    <properties>\n")
        self.properties.copy_to(out)
        out.write("    </properties>\n")
        self.cases.copy_to(out)
        out.write("  </testsuite>\n")

    def close(self) -> None:
        self.properties.close()
        self.cases.close()


# Every byte but the controls `clean_text` removes (NUL aside: it ends each key of a sort record)
_NOT_CONTROL = bytes(
    b for b in range(256) if not (0x01 <= b <= 0x08 or b in (0x0B, 0x0C) or 0x0E <= b <= 0x1F or b == 0x7F)
)


def _is_plain(name: str, raw: str) -> bool:
    """A case name that no other case of its suite can share: cleaning left it unchanged and it has
    one ` [` (so it splits back into one test id and target, which are unique in a suite)."""
    return name == raw and raw.count(" [") == 1


class _RiskyNames:
    """Per suite, the case names that cleaning changed or that do not split into one test id and
    target: only these can be shared by two cases (a plain name only with one of these), so only
    cases named so are counted while writing (bounded memory, the same names as counting all).
    Fed every key before the first case is written, but those `may_be_risky` rules out."""

    @staticmethod
    def may_be_risky(keys: bytes) -> bool:
        """Whether the UTF-8 bytes of these keys may hold a risky name: a character `clean_text`
        removes (no key given here holds a NUL or a lone surrogate) or a ` [`. Four scans in C."""
        return (
            b" [" in keys
            or b"\xef\xbf\xbe" in keys  # U+FFFE
            or b"\xef\xbf\xbf" in keys  # U+FFFF
            or bool(keys.translate(None, _NOT_CONTROL))
        )

    def __init__(self) -> None:
        self.by_suite: dict[str, set[str]] = {}

    def __call__(self, key: tuple[str, str, str]) -> None:
        suite, test_id, target = key
        raw = f"{test_id} [{target}]"
        name = clean_text(raw)
        if not _is_plain(name, raw):
            self.by_suite.setdefault(suite, set()).add(name)


def write_junit(summary: RunSummary, out: IO[str], repo_root: Path, waived: Waived | None = None) -> None:
    """Write the JUnit document for `summary` to `out` (deterministic for a given summary), holding
    no more than a bounded part of it in memory; `waived` failures as `<flakyFailure>`."""
    with paused_gc():  # many small strings and rows, no cycles: see gc_pause
        _write(summary, out, repo_root, waived or {})


def _finish_suite(suite: _SuiteWriter, body: SpooledText, totals: dict[str, float]) -> None:
    """Write `suite` out to `body` and count it in `totals`."""
    suite.write_to(body)
    suite.close()
    for key in totals:
        totals[key] += suite.counts[key]


def _write(summary: RunSummary, out: IO[str] | Utf8File, repo_root: Path, waived: Waived) -> None:
    risky = _RiskyNames()
    ordered = passed_or_aggregated_in_key_order(
        summary.results, risky, risky.may_be_risky
    )  # a case per test x target
    totals = {"tests": 0.0, "failures": 0.0, "errors": 0.0, "time": 0.0}
    body = SpooledText()
    try:
        suite: _SuiteWriter | None = None
        try:
            for result in ordered:  # a suite's cases come one after the other
                if suite is None or result.suite != suite.name:
                    if suite is not None:
                        _finish_suite(suite, body, totals)
                    risky_names = risky.by_suite.get(result.suite, set())
                    suite = _SuiteWriter(result.suite, summary, repo_root, risky_names, waived)
                if isinstance(result, PassedRow):
                    suite.add_passed(result)
                else:
                    suite.add(result)
            if suite is not None:
                _finish_suite(suite, body, totals)
        finally:
            if suite is not None:
                suite.close()
        root = _start(
            "testsuites",
            [
                ("name", "agentv-ci"),
                ("tests", str(int(totals["tests"]))),
                ("failures", str(int(totals["failures"]))),
                ("errors", str(int(totals["errors"]))),
                ("time", _num(totals["time"])),
            ],
        )
        out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        if body.empty():
            out.write(root + " />\n")
            return
        out.write(root + ">\n")
        body.copy_to(out)
        out.write("</testsuites>\n")
    finally:
        body.close()


def render_junit(summary: RunSummary, repo_root: Path, waived: Waived | None = None) -> str:
    """The JUnit document as a string (deterministic for a given summary)."""
    buffer = io.StringIO(newline="")
    write_junit(summary, buffer, repo_root, waived)
    return buffer.getvalue()


class JunitReporter:
    """Writes JUnit XML for test tabs (dorny/test-reporter, mikepenz/action-junit-report, GitLab, Jenkins)."""

    def write(self, summary: RunSummary, options: ReportOptions) -> None:
        waived = (
            {(w.suite, w.test_id, w.target): w.waiver for w in options.decision.waived}
            if options.decision
            else {}
        )
        with options.path.open("wb") as handle, paused_gc():  # as `write_junit`, bytes copied as they are
            _write(summary, Utf8File(handle), options.repo_root, waived)
