"""Workflow-command annotations for the job log: `::error file=...,line=...,title=...::message`.

Which tests get one, and at what level:

- `::error` for every test that did not pass: execution errors first (the run has no verdict for
  them: fix these before reading scores), then tests whose required grader failed, then the other
  failures, lowest score first. Execution errors are errors, not warnings, as in the SARIF report:
  with the default `--fail-on-error` they make the run inconclusive. When the gates passed anyway
  (failures tolerated by `--min-pass-rate`, errors by `--no-fail-on-error`) these are `::warning`s:
  a red annotation on a green run would be a false alarm.
- `::warning` for tests that still pass but got worse against the baseline (`regressed` or
  `possible regression` in the comparison the gates used).
- At most `limit` of those (GitHub shows 10 errors and 10 warnings per step); when there are more,
  one last `::notice` says how many were left out and points at the job summary.

Each annotation sits at the test's line in its eval file, with a repo-relative path (an absolute
path under the repository root is made relative; a path outside it drops the location, which would
not land in the PR diff anyway). Text is escaped as @actions/core does (`escapeData` /
`escapeProperty`), after model text is cleaned (ANSI, control characters) and `::` commands are broken,
so an answer cannot end the line or start a workflow command of its own.
"""

# No `from __future__ import annotations` here: it would bind the name this module's main function has.
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Literal

from agentv_ci.gating import GateDecision
from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.reporting.details import failing_graders, grader_failure_text, repo_relative, test_label
from agentv_ci.results.stored_results import aggregated
from agentv_ci.results.totals import outcome_of
from agentv_ci.security.redaction import excerpt
from agentv_ci.text_safety import neutralise_workflow_commands, printable
from agentv_ci.workflow_commands import escape_data, escape_property

__all__ = ["annotations", "escape_data", "escape_property", "workflow_command"]

Level = Literal["error", "warning", "notice"]
_MESSAGE_LIMIT = 1000  # characters of message before escaping; the log line stays readable
_TITLE_LIMIT = 200
_WORSE_BUT_PASSING = ("regressed", "possible regression")


def _safe(text: str, limit: int) -> str:
    """Model text made inert: cleaned (ANSI, control characters, lone surrogates), capped, `::` and
    `##[` commands broken (defence in depth: once CR and LF are escaped, nothing can start a line)."""
    return neutralise_workflow_commands(excerpt(text, limit))


def workflow_command(
    level: Level, message: str, *, file: str | None = None, line: int | None = None, title: str | None = None
) -> str:
    """One `::level file=...,line=...,title=...::message` line, every part escaped and made inert
    (print it with security.streams.print_workflow_command)."""
    properties = []
    if file:
        properties.append(f"file={escape_property(printable(file))}")
        if line is not None and line > 0:
            properties.append(f"line={line}")
    if title:
        properties.append(f"title={escape_property(_safe(title, _TITLE_LIMIT))}")
    head = f"::{level}" + (" " + ",".join(properties) if properties else "")
    return f"{head}::{escape_data(_safe(message, _MESSAGE_LIMIT))}"


def _location(result: TestResult, repo_root: Path) -> tuple[str | None, int | None]:
    path = repo_relative(result.eval_path, repo_root)
    if path is None or PurePosixPath(path).is_absolute() or PureWindowsPath(path).is_absolute():
        return None, None  # outside the repository: GitHub could not place it in the diff
    return path, result.line


def _severity(result: TestResult) -> tuple[int, float]:
    """Sort key, most severe first: execution errors, failed required graders, then by score."""
    if outcome_of(result) == "error":
        return 0, 0.0
    required = any(g.required and (g.verdict == "fail" or g.error) for g in result.scores)
    return (1 if required else 2), result.score


def _failure(result: TestResult, repo_root: Path, level: Level, waived: str | None = None) -> str:
    file, line = _location(result, repo_root)
    label = test_label(result)
    if outcome_of(result) == "error":
        return workflow_command(
            level,
            f"{label}: execution error: {result.error or 'unknown'}",
            file=file,
            line=line,
            title=f"Eval errored: {label}",
        )
    graders = failing_graders(result)
    detail = "\n".join(grader_failure_text(g, limit=_MESSAGE_LIMIT) for g in graders)
    message = f"{label}: score {result.score:.3f} < threshold {result.threshold:.2f}"
    if waived is not None:  # a quarantined or flaky test's failure: a warning, saying why it does not block
        level, message = "warning", f"{message}; not blocking, {waived}"
    return workflow_command(
        level,
        message + (f"\n{detail}" if detail else ""),
        file=file,
        line=line,
        title=f"Eval failed: {label}",
    )


def annotations(
    summary: RunSummary, decision: GateDecision, *, repo_root: Path, limit: int = 10
) -> list[str]:
    """Workflow-command lines for the tests that failed or errored (and, as warnings, the passing
    tests that got worse against the baseline), most severe first, at most `limit` of them, plus a
    closing `::notice` when some were left out. Print them to stdout inside GitHub Actions."""
    results = aggregated(summary.results)  # one annotation per test x target, not per attempt
    bad = [r for r in results if outcome_of(r) in ("failed", "error")]
    bad.sort(key=lambda r: (*_severity(r), r.suite, r.test_id, r.target))
    level: Level = "warning" if decision.passed else "error"
    waived = {(w.suite, w.test_id, w.target): w.waiver.text for w in decision.waived}
    lines = [_failure(r, repo_root, level, waived.get((r.suite, r.test_id, r.target))) for r in bad[:limit]]
    worse = []
    if decision.comparison is not None:
        passing = (r for r in aggregated(summary.results) if outcome_of(r) == "passed")
        by_key = {(r.suite, r.test_id, r.target): r for r in passing}
        for row in sorted(decision.comparison.tests, key=lambda t: (t.delta or 0.0, t.label)):
            head = by_key.get((row.suite, row.test_id, row.target))
            if row.status in _WORSE_BUT_PASSING and head is not None:
                worse.append((row.status, row.describe(), head))
    for status, description, head in worse[: max(limit - len(lines), 0)]:
        file, line = _location(head, repo_root)
        label = test_label(head)
        lines.append(
            workflow_command(
                "warning",
                f"{label}: {status} vs baseline ({description})",
                file=file,
                line=line,
                title=f"Eval {status}: {label}",
            )
        )
    left_out = len(bad) + len(worse) - len(lines)
    if left_out > 0:
        lines.append(
            workflow_command(
                "notice",
                f"{left_out} more failing or regressed test(s) not annotated here (at most {limit} "
                "are): see the job summary",
                title="agentv-ci",
            )
        )
    return lines
