"""SARIF 2.1.0 reporter (GitHub code scanning).

One rule per grader type (`agentv/<type>`), plus `agentv/execution-error` and
`agentv/below-threshold` (a failing test with no failing grader to blame). One result per failing
grader of each failing test, located at the test's line in its eval file (repo-relative URI).
Level: `error` for required graders and execution errors, `warning` otherwise. Passing tests
produce no results. GitHub rejects runs with more than 25,000 results: the most severe are kept
and a notification says how many were left out.

`sarif_from_diagnostics` gives `validate --format sarif` the same shape.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import msgspec

from agentv_ci import __version__
from agentv_ci.model.codes import CODES
from agentv_ci.model.result import GraderResult, RunSummary, TestResult
from agentv_ci.plugins import ReportOptions
from agentv_ci.reporting.details import (
    REPORT,
    failing_graders,
    grader_failure_text,
    repo_relative,
    test_label,
)
from agentv_ci.results.gc_pause import paused_gc
from agentv_ci.results.stored_results import aggregated_failing
from agentv_ci.results.tally import Smallest
from agentv_ci.results.totals import outcome_of
from agentv_ci.security.redaction import excerpt
from agentv_ci.text_safety import clean_text

if TYPE_CHECKING:
    from agentv_ci.model.diagnostics import Diagnostic

__all__ = ["MAX_RESULTS", "SarifReporter", "render_sarif", "sarif_from_diagnostics"]

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/agentevals/agentv-ci"
MAX_RESULTS = 25_000
_MESSAGE_LIMIT = REPORT.grader  # one finding's message (reporting.details: every report's limits)
# GitHub rejects uploads over 10 MB gzipped; model evidence barely compresses, so the messages of a
# huge run share a budget (25,000 results -> 200 characters each, about 6 MB gzipped at worst).
_MESSAGE_BUDGET = 5_000_000
_MIN_MESSAGE = 200
_DESCRIPTION_LIMIT = 1024  # GitHub's cap on rule descriptions
SRCROOT = "%SRCROOT%"
_URI_SAFE = "/-._~!$&'()*+,;=:@"
_LEVEL_RANK = {"error": 0, "warning": 1, "note": 2}


@dataclass(frozen=True)
class Finding:
    """One SARIF result before encoding."""

    rule_id: str
    level: str
    message: str
    uri: str | None
    line: int
    col: int
    fingerprint: str


def _severity(finding: Finding) -> tuple[int, str, int, str]:
    """Most severe first, then by place and message (the order results are kept and written in)."""
    return (_LEVEL_RANK.get(finding.level, 3), finding.uri or "", finding.line, finding.message)


def _cap(text: str, limit: int = _DESCRIPTION_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _rule(rule_id: str, title: str, description: str, help_text: str, level: str) -> dict[str, Any]:
    name = "".join(part.capitalize() for part in rule_id.split("/")[-1].replace("_", "-").split("-"))
    return {
        "id": rule_id,
        "name": _cap(name or "Rule", 200),
        "shortDescription": {"text": _cap(title)},
        "fullDescription": {"text": _cap(description)},
        "help": {"text": _cap(help_text)},
        "defaultConfiguration": {"level": level},
        "properties": {"tags": ["eval"]},
    }


def _grader_rule(grader_type: str) -> dict[str, Any]:
    safe = _cap(clean_text(grader_type), 200)
    return _rule(
        f"agentv/{safe}",
        f"Eval grader '{safe}' failed",
        f"A grader of type '{safe}' scored an answer below its bar, so the eval test failed.",
        "Open the eval report for the answer and the failing assertions; rerun with repeats to rule "
        "out noise.",
        "warning",
    )


_FIXED_RULES = {
    "agentv/execution-error": _rule(
        "agentv/execution-error",
        "Eval test could not run",
        "The target or a grader failed (network, process, timeout), so the test has no verdict.",
        "Check the error in the eval report; the run is inconclusive until the test runs.",
        "error",
    ),
    "agentv/below-threshold": _rule(
        "agentv/below-threshold",
        "Eval test scored below its threshold",
        "The weighted score of the test's graders is below the test threshold.",
        "Open the eval report for the per-grader scores.",
        "warning",
    ),
}


def _fingerprint(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8", "replace")).hexdigest()[:32]


def _graders_to_blame(result: TestResult) -> list[GraderResult]:
    graders = failing_graders(result)
    if not graders:
        for trial in result.trials:
            graders = failing_graders(trial)
            if graders:
                break
    return graders


def findings_of(summary: RunSummary, repo_root: Path) -> list[Finding]:
    return list(iter_findings(summary, repo_root))


def iter_findings(summary: RunSummary, repo_root: Path) -> Iterator[Finding]:
    """The findings of every failed or errored test, one at a time (a run's rows are read back)."""
    for result in aggregated_failing(summary.results):  # one finding per test x target, not per attempt
        outcome = outcome_of(result)
        if outcome not in ("failed", "error"):
            continue
        uri = repo_relative(result.eval_path, repo_root)
        line = max(result.line or 1, 1)
        label = test_label(result)
        key = (result.suite, result.test_id, result.target)
        if outcome == "error":
            text = f"{label}: execution error: {result.error or 'unknown'}"
            yield (
                Finding("agentv/execution-error", "error", excerpt(text, _MESSAGE_LIMIT), uri, line, 1,
                        _fingerprint(*key, "execution-error"))
            )  # fmt: skip
            continue
        graders = _graders_to_blame(result)
        if not graders:
            text = f"{label}: score {result.score:.3f} < threshold {result.threshold:.2f}"
            yield (
                Finding(
                    "agentv/below-threshold", "warning", text, uri, line, 1, _fingerprint(*key, "threshold")
                )
            )
        for grader in graders:
            text = f"{label}: {grader_failure_text(grader, limit=_MESSAGE_LIMIT, value_limit=100)}"
            yield (
                Finding(
                    f"agentv/{clean_text(grader.type)}",
                    "error" if grader.required else "warning",
                    excerpt(text, _MESSAGE_LIMIT),
                    uri,
                    line,
                    1,
                    _fingerprint(*key, grader.name),
                )
            )


def artifact_location(path: str) -> dict[str, str]:
    """A percent-encoded URI: repo-relative paths under `%SRCROOT%` (what GitHub maps onto the
    checkout), anything outside the repository as an absolute `file://` URI."""
    if path.startswith("/"):
        return {"uri": "file://" + quote(path, safe=_URI_SAFE)}
    return {"uri": quote(path, safe=_URI_SAFE), "uriBaseId": SRCROOT}


def _encode(findings: list[Finding], rules: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    rule_index = {rid: i for i, rid in enumerate(sorted(rules))}
    limit = min(_MESSAGE_LIMIT, max(_MIN_MESSAGE, _MESSAGE_BUDGET // max(len(findings), 1)))
    encoded = []
    for f in findings:
        message = f.message if len(f.message) <= limit else excerpt(f.message, limit)
        item: dict[str, Any] = {
            "ruleId": f.rule_id,
            "ruleIndex": rule_index[f.rule_id],
            "level": f.level,
            "message": {"text": message or f.rule_id},
            "partialFingerprints": {"agentvFinding/v1": f.fingerprint},
        }
        if f.uri:
            item["locations"] = [
                {
                    "physicalLocation": {
                        "artifactLocation": artifact_location(f.uri),
                        "region": {"startLine": f.line, "startColumn": max(f.col, 1)},
                    }
                }
            ]
        encoded.append(item)
    return encoded


def build_log(
    findings: list[Finding],
    rules: dict[str, dict[str, Any]],
    *,
    version: str,
    category: str | None = None,
    total: int | None = None,
) -> dict[str, Any]:
    """A SARIF log with one run; truncated to `MAX_RESULTS` (most severe first) with a note.

    The driver always carries a `version` (GitHub code scanning and the SARIF validator want one):
    `version` when given (the run's), else this package's; `semanticVersion` only when given.

    `automationDetails` is written only for an explicit `category`: upload-sarif fills it from its
    own `category` input (or a per-job/matrix default) only when the file has none, so a fixed
    value here would make matrix jobs overwrite each other's alerts.
    """
    ordered = sorted(findings, key=_severity)
    total = len(ordered) if total is None else total  # `findings` may be the most severe of `total`
    kept, dropped = ordered[:MAX_RESULTS], total - min(len(ordered), MAX_RESULTS)
    used = {f.rule_id for f in kept}
    rules = {rid: rule for rid, rule in rules.items() if rid in used}
    driver: dict[str, Any] = {
        "name": "agentv-ci",
        # the agentv-ci behind the results when the run recorded it, else the one writing this file
        "version": version or __version__,
        "informationUri": INFORMATION_URI,
        "rules": [rules[rid] for rid in sorted(rules)],
    }
    if version:
        driver["semanticVersion"] = version
    invocation: dict[str, Any] = {"executionSuccessful": True}
    if dropped > 0:
        invocation["toolExecutionNotifications"] = [
            {
                "level": "warning",
                "message": {
                    "text": f"{dropped} of {total} results were left out: GitHub accepts at most "
                    f"{MAX_RESULTS} results per run (the most severe are kept)."
                },
            }
        ]
    run: dict[str, Any] = {
        "tool": {"driver": driver},
        "invocations": [invocation],
        "columnKind": "unicodeCodePoints",
        "results": _encode(kept, rules),
    }
    if category:
        run["automationDetails"] = {"id": category if category.endswith("/") else category + "/"}
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render_sarif(summary: RunSummary, repo_root: Path, *, category: str | None = None) -> dict[str, Any]:
    severest: Smallest[Finding] = Smallest(MAX_RESULTS, _severity)  # flat memory, however many fail
    with paused_gc():  # many small containers, no cycles: see gc_pause
        for finding in iter_findings(summary, repo_root):
            severest.add(finding)
        findings = severest.items
    rules = dict(_FIXED_RULES)
    for f in findings:
        if f.rule_id not in rules:
            rules[f.rule_id] = _grader_rule(f.rule_id.split("/", 1)[1])
    return build_log(findings, rules, version=summary.version, category=category, total=severest.count)


def sarif_from_diagnostics(
    diagnostics: Iterable[Diagnostic], repo_root: Path, *, version: str = ""
) -> dict[str, Any]:
    """Validation diagnostics as SARIF: one rule per diagnostic code, located at file:line:col."""
    findings: list[Finding] = []
    rules: dict[str, dict[str, Any]] = {}
    for d in diagnostics:
        rule_id = f"agentv/{d.code}"
        level = "error" if d.severity == "error" else "warning"
        if rule_id not in rules:
            title = CODES[d.code][1] if d.code in CODES else "eval file problem"
            rules[rule_id] = _rule(
                rule_id,
                f"{d.code}: {title}",
                f"`agentv-ci validate` reported {d.code} ({title}); see docs/diagnostics.md.",
                d.hint or "See docs/diagnostics.md for this code.",
                level,
            )
        text = clean_text(d.message + (f" (hint: {d.hint})" if d.hint else ""))
        findings.append(
            Finding(rule_id, level, text, repo_relative(d.file, repo_root), max(d.line, 1), max(d.col, 1),
                    _fingerprint(d.file, str(d.line), d.code, d.message))
        )  # fmt: skip
    return build_log(findings, rules, version=version)


class SarifReporter:
    """Writes SARIF 2.1.0 for `github/codeql-action/upload-sarif` (annotations on eval files)."""

    def write(self, summary: RunSummary, options: ReportOptions) -> None:
        """`options.sarif_category` is the run's `automationDetails.id`, if any."""
        document = render_sarif(summary, options.repo_root, category=options.sarif_category or None)
        # msgspec: the same indented UTF-8 as json.dumps(indent=2, ensure_ascii=False), ~10x faster
        options.path.write_bytes(msgspec.json.format(msgspec.json.encode(document), indent=2) + b"\n")
