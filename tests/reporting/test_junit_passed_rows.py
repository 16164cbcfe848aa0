"""JUnit from a run's own rows, its passing ones read without their grader results (`PassedRow`),
is byte for byte what junit-xml writes from the full rows (tests/reporting/junit_oracle.py)."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentv_ci.model.result import AttemptSummary, RunSummary, TestResult, TokenUsage
from agentv_ci.model.waivers import Waiver
from agentv_ci.reporting.junit import render_junit
from agentv_ci.results.passed_rows import PassedRow
from agentv_ci.results.results_file import ResultsWriter, read_results
from agentv_ci.results.stored_results import StoredResults
from agentv_ci.results.tally import ResultsTally
from agentv_ci.results.written_rows import WrittenRows
from agentv_ci.security.redaction import SECRETS
from tests.reporting.golden import FAKE_REPO
from tests.reporting.junit_oracle import junit_xml_document
from tests.reporting.sample_runs import HOSTILE, encodable, sample_results
from tests.reporting.test_junit_oracle import NASTY, _rows

# Text the writer keeps as it is (no lone surrogate: a scrubbed row drops the writer's facts)
KEPT_HOSTILE = HOSTILE.replace("\ud83d", "")
KEPT_NASTY = [n for n in NASTY if "\ud800" not in n] + ["a:b", "x #1", "100%3A", "é [z]", "&amp;"]


def _store(
    rows: list[TestResult], index: Path, *, complete: bool = True, unique_keys: bool = False
) -> tuple[StoredResults, list[TestResult]]:
    """The rows written by a `ResultsWriter` whose facts describe the file (as a run writes them),
    and the rows as the full reader reads them back."""
    seen = WrittenRows()
    tally = ResultsTally()
    with ResultsWriter(index, seen) as writer:
        for row in rows:
            tally.add(writer.append(row))
    assert seen.complete or not complete
    stored = StoredResults(index, tally, count=len(rows), unique_keys=unique_keys, own=True, written=seen)
    return stored, read_results(index)


def _passing(
    test_id: str, suite: str = "s", target: str = "t", score: float = 1.0, **fields: object
) -> TestResult:
    return TestResult(test_id, suite, target, score, "ok", verdict="pass", **fields)  # type: ignore[arg-type]


def test_hostile_passing_rows_read_light_are_what_junit_xml_writes(tmp_path: Path) -> None:
    rows = encodable(sample_results(FAKE_REPO))
    for i, nasty in enumerate(KEPT_NASTY):
        rows.append(
            _passing(
                f"id{i}{nasty}",
                suite=f"suite{nasty}",
                target=nasty,
                input=nasty,
                output=KEPT_HOSTILE + nasty,
                eval_path=f"evals/{i}{nasty}.yaml",
                line=i,
                duration_ms=1234.5,
                cost_usd=0.25,
                token_usage=TokenUsage(5, 6),
            )
        )
    rows += [
        _passing("long", input="i" * 5000, output="o" * 5000 + "\r\n::error::x"),
        _passing("zero", score=-0.0, threshold=0.0, duration_ms=float("nan"), line=-1),
        _passing("tiny", score=1e-9, duration_ms=0.01, eval_path="/elsewhere/x.yaml"),
        TestResult("qf-pass", "s", "t", 0.1, "quality_failure", verdict="pass", output="o"),
        TestResult("ok-no-verdict", "s", "t", 0.1, "ok", verdict="fail"),  # read as a pass
        _passing("waived"),  # a waiver on a passing test changes nothing
        *(_passing(f"same{c}") for c in ("", "\x00", "\x1b[0m")),  # one name after cleaning
        _passing("x [y", target="z]"),
        _passing("x", target="y [z]"),
        _passing("rep", attempt=0),
        _passing("rep", attempt=1, output="second"),  # attempts: merged by the full reader
        _passing("agg", aggregation=AttemptSummary("mean", 2, 2)),
    ]
    stored, written = _store(rows, tmp_path / "index.jsonl")
    waived = {
        ("s", "waived", "t"): Waiver("quarantined", "parked"),
        ("s", "greets", "mock"): Waiver("flaky", "f"),
    }
    read_light = [r for r in stored.passed_or_aggregated_in_key_order() if isinstance(r, PassedRow)]
    assert len(read_light) >= len(KEPT_NASTY) + 10  # the light path is the one under test
    document = render_junit(RunSummary(results=stored, started_at="2026-01-02T03:04:05Z"), FAKE_REPO, waived)
    expected = RunSummary(results=written, started_at="2026-01-02T03:04:05Z")
    assert document == junit_xml_document(expected, FAKE_REPO, waived)
    assert document == render_junit(expected, FAKE_REPO, waived)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(_rows, max_size=8), exhausted=st.booleans())
def test_random_small_runs_read_back_are_what_junit_xml_writes(
    rows: list[TestResult], exhausted: bool
) -> None:
    kept = [row for row in encodable(rows) if not math.isnan(row.score)]  # NaN is written as null
    with tempfile.TemporaryDirectory() as directory:  # a suite "" drops the facts: rows read in full
        stored, written = _store(kept, Path(directory) / "index.jsonl", complete=False)
        document = render_junit(RunSummary(results=stored, budget_exhausted=exhausted), FAKE_REPO)
    assert document == junit_xml_document(RunSummary(results=written, budget_exhausted=exhausted), FAKE_REPO)


def test_a_secret_known_after_the_rows_were_written_is_masked_in_passing_cases(tmp_path: Path) -> None:
    rows = [
        _passing("a", input="token s3cr3t-value-123", output="plain"),
        _passing("b", output="s3cr3t-value-123"),
    ]
    stored, read = _store(rows, tmp_path / "index.jsonl")
    assert all(isinstance(r, PassedRow) for r in stored.passed_or_aggregated_in_key_order())
    SECRETS.add("s3cr3t-value-123")  # the autouse fixture forgets it after the test
    document = render_junit(RunSummary(results=stored), FAKE_REPO)
    assert "s3cr3t" not in document and document.count("***") == 2
    assert document == render_junit(RunSummary(results=read), FAKE_REPO)


def test_passing_cases_of_a_suite_whose_figures_change_from_case_to_case(tmp_path: Path) -> None:
    """The property lines of a suite's passing cases come from a template of what most share: each
    case whose score, threshold, file, cost or tokens differ from the case before (or print
    differently while equal: 0.0 and -0.0) gets its own lines."""
    changes: list[dict[str, object]] = [
        {},
        {},
        {"score": 0.9},
        {"score": 0.0},
        {"score": -0.0},
        {"threshold": 0.0},
        {"threshold": -0.0},
        {"cost_usd": 0.0},
        {"cost_usd": -0.0},
        {"cost_usd": 0.5},
        {"token_usage": TokenUsage(1, 2)},
        {"token_usage": TokenUsage(3, 4)},
        {"eval_path": "evals/other.yaml"},
        {"line": None},
        {"line": -3},
        {"score": 1e-9},
        {},
    ]
    rows = []
    for n, fields in enumerate(changes):
        values: dict[str, object] = {"eval_path": "evals/a.yaml", "line": n, "threshold": 0.5, **fields}
        rows.append(_passing(f"c{n:02d}", **values))
    stored, written = _store(rows, tmp_path / "index.jsonl", unique_keys=True)  # a row a key
    assert all(isinstance(r, PassedRow) for r in stored.passed_or_aggregated_in_key_order())
    document = render_junit(RunSummary(results=stored), FAKE_REPO)
    assert document == junit_xml_document(RunSummary(results=written), FAKE_REPO)
    assert 'c04 [t].score" value="-0.0000"' in document and 'c08 [t].cost_usd" value="-0.000000"' in document
