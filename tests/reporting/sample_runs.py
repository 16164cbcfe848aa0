"""Deterministic runs for report tests (fixed timestamps, every outcome, hostile model text)."""

from __future__ import annotations

from pathlib import Path

import msgspec

from agentv_ci.model.result import (
    AssertionResult,
    AttemptSummary,
    GraderResult,
    RunSummary,
    TestResult,
    TokenUsage,
)

# Model text that must never reach a report raw: ANSI, a lone surrogate, HTML, a mention,
# a workflow command, a code fence, XML-illegal controls.
HOSTILE = (
    "Sure!\x1b[31m red \x1b[0m\ud83d <script>alert(1)</script> @octocat\n"
    "::set-output name=token::leak\n```\nbreak out\n```\x00\x0b end"
)


# Definition fingerprints as the runner writes them (running/fingerprints.py). The baseline's `adds`
# has another one: its definition changed, so compare calls it `changed` (not `fixed`).
FINGERPRINTS = {
    "greets": "5f0c1a2b3c4d5e6f",
    "refund-policy": "0a1b2c3d4e5f6071",
    "flaky-math": "8192a3b4c5d6e7f8",
    "adds": "a0d5a0d5a0d5a0d5",
    "timeout": "7157e0b7157e0b71",
    "later": "1a7e71a7e71a7e71",
}


def sample_results(repo_root: Path) -> list[TestResult]:
    rows = _sample_rows(repo_root)
    return [msgspec.structs.replace(r, fingerprint=FINGERPRINTS[r.test_id]) for r in rows]


def _sample_rows(repo_root: Path) -> list[TestResult]:
    evals = repo_root / "evals"
    return [
        TestResult(
            test_id="greets",
            suite="smoke",
            target="mock",
            score=1.0,
            execution_status="ok",
            verdict="pass",
            scores=[
                GraderResult(
                    "says-hello", "contains", 1.0, "pass", assertions=[AssertionResult("hello", True)]
                )
            ],
            token_usage=TokenUsage(input=10, output=5),
            cost_usd=0.0012,
            duration_ms=1200.0,
            eval_path=str(evals / "smoke.eval.yaml"),
            line=7,
            input="Say hello",
            output="hello there",
        ),
        TestResult(
            test_id="refund-policy",
            suite="smoke",
            target="mock",
            score=0.25,
            execution_status="quality_failure",
            verdict="fail",
            scores=[
                GraderResult(
                    "mentions-refund",
                    "contains",
                    0.0,
                    "fail",
                    required=True,
                    assertions=[AssertionResult("contains 'refund'", False, "not found in answer")],
                ),
                GraderResult(
                    "polite",
                    "llm-grader",
                    0.5,
                    "fail",
                    assertions=[AssertionResult("apologises", False, HOSTILE)],
                ),
            ],
            token_usage=TokenUsage(input=100, output=40),
            cost_usd=0.004,
            duration_ms=2500.0,
            eval_path=str(evals / "smoke.eval.yaml"),
            line=15,
            input="What is the refund policy?",
            output=HOSTILE,
        ),
        TestResult(
            test_id="flaky-math",
            suite="math",
            target="mock",
            score=0.6,
            execution_status="quality_failure",
            verdict="fail",
            scores=[GraderResult("exact", "equals", 0.6, "fail")],
            aggregation=AttemptSummary("mean", 3, 5, scores=[1.0, 1.0, 1.0, 0.0, 0.0], mean=0.6),
            duration_ms=5000.0,
            eval_path="evals/math.eval.yaml",
            line=3,
            output="41",
        ),
        TestResult(
            test_id="adds",
            suite="math",
            target="mock",
            score=1.0,
            execution_status="ok",
            verdict="pass",
            eval_path="evals/math.eval.yaml",
            line=10,
        ),
        TestResult(
            test_id="timeout",
            suite="math",
            target="mock",
            score=0.0,
            execution_status="execution_error",
            verdict="fail",
            error="TargetError: read timed out after 30s\n  at attempt 3",
            failure_stage="agent",
            failure_reason_code="timeout",
            eval_path="evals/math.eval.yaml",
            line=20,
        ),
        TestResult(
            test_id="later",
            suite="math",
            target="mock",
            score=0.0,
            execution_status="not_run",
            verdict="skip",
            eval_path="evals/math.eval.yaml",
            line=30,
        ),
    ]


def sample_summary(repo_root: Path) -> RunSummary:
    return RunSummary(
        results=sample_results(repo_root),
        started_at="2026-01-02T03:04:05Z",
        ended_at="2026-01-02T03:05:05Z",
        duration_ms=60000.0,
        budget_exhausted=True,
        not_run=1,
        selection={
            "evals/smoke.eval.yaml": "changed: prompts/refund.md (read by the eval)",
            "evals/math.eval.yaml": "global trigger: .agentv/targets.yaml changed",
        },
        version="0.1.0",
    )


def baseline_summary(repo_root: Path) -> RunSummary:
    """A baseline where refund-policy passed, flaky-math passed 5/5 and adds failed under an older
    definition (another fingerprint)."""
    head = {r.test_id: r for r in sample_results(repo_root)}
    base = [
        head["greets"],
        TestResult(
            "refund-policy",
            "smoke",
            "mock",
            0.9,
            "ok",
            verdict="pass",
            fingerprint=FINGERPRINTS["refund-policy"],
        ),
        TestResult(
            "flaky-math",
            "math",
            "mock",
            1.0,
            "ok",
            verdict="pass",
            aggregation=AttemptSummary("mean", 5, 5, scores=[1.0] * 5, mean=1.0),
            fingerprint=FINGERPRINTS["flaky-math"],
        ),
        TestResult("adds", "math", "mock", 0.5, "quality_failure", fingerprint="a0d5a0d5000000d0"),
        TestResult("retired", "math", "mock", 1.0, "ok", verdict="pass", fingerprint="2e712ed2e712ed00"),
    ]
    return RunSummary(results=base, started_at="2026-01-01T00:00:00Z")


def encodable(rows: list[TestResult]) -> list[TestResult]:
    """The rows a results writer writes as they are: a row with a lone surrogate is scrubbed when
    written, so it is left out."""
    kept = []
    for row in rows:
        try:
            msgspec.json.encode(row)
        except UnicodeEncodeError:
            continue
        kept.append(row)
    return kept
