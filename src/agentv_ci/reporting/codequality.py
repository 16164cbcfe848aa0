"""GitLab Code Quality report (`artifacts:reports:codequality`, `gl-code-quality-report.json`).

A JSON array with one finding per failed or errored test (x target; repeats aggregated), at its eval
file (repo-relative) and its line, as SARIF locates it (`reporting.details`). Each finding has the
fields GitLab documents: `description`, `check_name`, `fingerprint`, `severity` and
`location: {path, lines: {begin}}`.

GitLab keys findings by `fingerprint` and shows those of the merge request that its target branch
lacks as new, and the reverse as fixed. So the fingerprint is a hash of the test (suite, id, target)
and the kind of failure (`failed`, `execution-error`) only: the same failure keeps its fingerprint
across runs, however its score, answer, line or time change, and two tests never share one.

Severity: `critical` for an execution error (the run is inconclusive) and for a failed required
grader, `major` for another failure, `info` for a failure the gates waived (quarantined, flaky).
Descriptions are cleaned, redacted, kept on one line and capped (`REPORT.message`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

import msgspec

from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.model.waivers import Waiver
from agentv_ci.plugins import ReportOptions
from agentv_ci.reporting.details import (
    REPORT,
    attempts_text,
    failed_checks,
    failing_graders,
    failure_headline,
    repo_relative,
    test_label,
)
from agentv_ci.results.stored_results import aggregated_failing
from agentv_ci.results.totals import outcome_of
from agentv_ci.security.redaction import excerpt, redact
from agentv_ci.text_safety import clean_text, printable

__all__ = ["CodeQualityReporter", "fingerprint_of", "iter_codequality", "render_codequality"]

Severity = Literal["info", "minor", "major", "critical", "blocker"]
FailureKind = Literal["failed", "execution-error"]
# (suite, test id, target) -> the waiver that kept the test's failure from blocking
Waived = Mapping[tuple[str, str, str], Waiver]

_FINGERPRINT_VERSION = "agentv-ci/codequality/v1"
_CHECK_NAME_LIMIT = 200


def fingerprint_of(result: TestResult, kind: FailureKind) -> str:
    """The finding's identity across runs: the test and the kind of failure, nothing that varies."""
    digest = hashlib.sha256()
    for part in (_FINGERPRINT_VERSION, result.suite, result.test_id, result.target, kind):
        # Length-prefixed, not joined: ids may hold any separator (lone surrogates too) and must not
        # collide.
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def _one_line(text: str, limit: int) -> str:
    """Cleaned, redacted, on one line, bidirectional overrides and other controls shown escaped."""
    text = printable(" ".join(excerpt(text, limit * 2).split()))
    return text if len(text) <= limit else redact(text[: limit - 1]) + "…"


def _why_failed(result: TestResult) -> str:
    headline = failure_headline(result)
    if headline:
        return headline
    checks = [pair for grader in failing_graders(result) for pair in failed_checks(grader)]
    if checks:
        grader, check = checks[0]
        why = f"{grader.name}: {check.text}" + (f" ({check.evidence})" if check.evidence else "")
        return why + (f" (and {len(checks) - 1} more failed checks)" if len(checks) > 1 else "")
    graders = failing_graders(result)
    if graders:
        return "failing: " + ", ".join(g.name for g in graders)
    return f"score {result.score:.3f} below threshold {result.threshold:.2f}"


def _description(result: TestResult, kind: FailureKind, waiver: Waiver | None) -> str:
    label = test_label(result)
    if kind == "execution-error":
        text = f"{label} could not run: {result.error or 'unknown error'}"
    else:
        text = f"{label} failed: {_why_failed(result)}"
        attempts = attempts_text(result)
        if attempts:
            text += f" ({attempts})"
    if waiver is not None and not waiver.blocks:
        text += f" [does not block: {waiver.text}]"
    return _one_line(text, REPORT.message)


def _check_name(result: TestResult, kind: FailureKind) -> str:
    if kind == "execution-error":
        return "agentv/execution-error"
    graders = failing_graders(result)
    if not graders:
        return "agentv/below-threshold"
    return "agentv/" + clean_text(graders[0].type)[:_CHECK_NAME_LIMIT]


def _severity(result: TestResult, kind: FailureKind, waiver: Waiver | None) -> Severity:
    if waiver is not None and not waiver.blocks:
        return "info"
    if kind == "execution-error" or any(g.required for g in failing_graders(result)):
        return "critical"
    return "major"


def iter_codequality(
    summary: RunSummary, repo_root: Path, waived: Waived | None = None
) -> Iterator[dict[str, Any]]:
    """The findings, one at a time (a run's passing rows are not even decoded)."""
    for result in aggregated_failing(summary.results):
        outcome = outcome_of(result)
        if outcome not in ("failed", "error"):
            continue
        kind: FailureKind = "execution-error" if outcome == "error" else "failed"
        waiver = waived.get((result.suite, result.test_id, result.target)) if waived else None
        yield {
            "description": _description(result, kind, waiver),
            "check_name": _check_name(result, kind),
            "fingerprint": fingerprint_of(result, kind),
            "severity": _severity(result, kind, waiver),
            "location": {
                "path": clean_text(repo_relative(result.eval_path, repo_root) or ""),
                "lines": {"begin": max(result.line or 1, 1)},
            },
        }


def render_codequality(
    summary: RunSummary, repo_root: Path, waived: Waived | None = None
) -> list[dict[str, Any]]:
    return list(iter_codequality(summary, repo_root, waived))


class CodeQualityReporter:
    """Writes GitLab's Code Quality JSON (`artifacts:reports:codequality`): failing tests on the MR."""

    def write(self, summary: RunSummary, options: ReportOptions) -> None:
        waived = (
            {(w.suite, w.test_id, w.target): w.waiver for w in options.decision.waived}
            if options.decision
            else {}
        )
        # Streamed finding by finding: a run with many failures never holds them all.
        with options.path.open("wb") as handle:
            handle.write(b"[")
            for number, finding in enumerate(iter_codequality(summary, options.repo_root, waived)):
                handle.write(b",\n  " if number else b"\n  ")
                handle.write(msgspec.json.encode(finding))
            handle.write(b"\n]\n")
