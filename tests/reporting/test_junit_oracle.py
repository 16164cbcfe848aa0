"""junit-xml is the oracle of the streamed JUnit writer: for small runs the writer's bytes equal what
junit-xml builds from the same summary (tests/reporting/junit_oracle.py says how junit-xml's output
is normalised, and why). junit-xml is a dev dependency only."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest
import xmlschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentv_ci.model.result import (
    AssertionResult,
    AttemptSummary,
    GraderResult,
    RunSummary,
    TestResult,
    TokenUsage,
)
from agentv_ci.model.waivers import Waiver
from agentv_ci.reporting.junit import render_junit
from tests.conftest import REPO_ROOT
from tests.reporting.golden import FAKE_REPO
from tests.reporting.junit_oracle import junit_xml_document
from tests.reporting.sample_runs import HOSTILE, sample_summary

XSD = Path(__file__).resolve().parent.parent / "schemas" / "junit-10.xsd"  # the unmodified Jenkins XSD

# Names a reader echoes to the job log or that XML must escape: workflow commands, quotes, markup,
# tabs, newlines, carriage returns, ANSI, a lone surrogate, XML-illegal controls.
NASTY = ["::warning::x", '"q" & <b>', "a\tb\nc\rd", "##[group]g", "\x1b[1mbold\x1b[0m", "x\ud800y\x00\x0b"]


def _assert_same(summary: RunSummary, waived: dict[tuple[str, str, str], Waiver] | None = None) -> str:
    written = render_junit(summary, FAKE_REPO, waived)
    assert written == junit_xml_document(summary, FAKE_REPO, waived)
    return written


def _fail(test_id: str, suite: str = "s", target: str = "t", **fields: object) -> TestResult:
    grader = GraderResult("g", "contains", 0.0, "fail", assertions=[AssertionResult("has x", False, "no x")])
    return TestResult(
        test_id, suite, target, 0.0, "quality_failure", verdict="fail", scores=[grader], **fields
    )  # type: ignore[arg-type]


def test_the_sample_run_is_what_junit_xml_writes() -> None:
    # pass, quality failure with hostile model text, repeats, an execution error, a test not run
    _assert_same(sample_summary(FAKE_REPO))


def test_an_empty_run_and_a_dry_run_are_what_junit_xml_writes() -> None:
    _assert_same(RunSummary([]))
    dry = RunSummary([TestResult("a", "s", "m", 1.0, "ok", verdict="pass", dry_run=True)], dry_run=True)
    _assert_same(dry)


def test_waived_failures_are_junit_xml_failures_renamed_flaky_failure() -> None:
    rows = [_fail("parked", duration_ms=1500.0), _fail("shaky", output="42"), _fail("red")]
    waived = {
        ("s", "parked", "t"): Waiver("quarantined", "quarantined (owner @ana, until 2999-12-31): slow API"),
        ("s", "shaky", "t"): Waiver("flaky", "flaky: failed now; passed 3 of 5 runs on main"),
    }
    written = _assert_same(RunSummary(rows), waived)
    assert written.count("<flakyFailure ") == 2 and written.count("<failure ") == 1
    assert 'failures="1"' in written.split("<testsuite ", 1)[1].split(">", 1)[0]


def test_hostile_names_and_text_are_what_junit_xml_writes() -> None:
    rows = []
    for i, nasty in enumerate(NASTY):
        rows.append(
            _fail(
                f"id{i}{nasty}",
                suite=f"suite{nasty}",
                target=nasty,
                output=HOSTILE + nasty,
                input=nasty,
                eval_path=f"evals/{i}{nasty}.yaml",
                line=i,
            )
        )
        rows.append(
            TestResult(
                f"err{nasty}",
                "s",
                "t",
                0.0,
                "execution_error",
                error=f"{nasty}\n{HOSTILE}",
                failure_reason_code=nasty,
            )
        )
        rows.append(TestResult(f"skip{nasty}", "s", "t", 0.0, "not_run", verdict="skip", error=nasty))
    _assert_same(RunSummary(rows, started_at="2026-01-02T03:04:05Z" + NASTY[0]))


def test_names_that_collide_after_cleaning_are_what_junit_xml_writes() -> None:
    rows = [TestResult(f"same{c}", "s", "t", 1.0, "ok", verdict="pass") for c in ("", "\x00", "\x1b[0m")]
    rows += [TestResult("x [y", "s", "z]", 1.0, "ok"), TestResult("x", "s", "y [z]", 0.0, "quality_failure")]
    written = _assert_same(RunSummary(rows))
    assert 'name="same [t] #3"' in written


def test_repeats_times_and_edge_values_are_what_junit_xml_writes() -> None:
    attempts = [
        TestResult("rep", "s", "t", score, status, verdict=verdict, attempt=i, duration_ms=ms)  # type: ignore[arg-type]
        for i, (score, status, verdict, ms) in enumerate(
            [
                (1.0, "ok", "pass", 1000.0),
                (0.0, "quality_failure", "fail", 0.01),
                (0.0, "execution_error", "fail", None),
            ]
        )
    ]
    rows = [
        *attempts,
        TestResult(
            "tiny", "s", "t", 1.0, "ok", duration_ms=0.01, cost_usd=1e-9, token_usage=TokenUsage(1, 2)
        ),
        TestResult("negative", "s", "t", 1.0, "ok", duration_ms=-5.0, line=-1),
        TestResult("nan", "s2", "t", float("nan"), "quality_failure", duration_ms=float("nan")),
        TestResult("blank-error", "s2", "t", 0.0, "execution_error", error="\n   \n"),
        TestResult("agg", "s2", "t", 0.4, "quality_failure", aggregation=AttemptSummary("mean", 2, 5)),
    ]
    _assert_same(RunSummary(rows, budget_exhausted=False))


_text = st.text(
    alphabet=st.sampled_from(
        ["a", "b", " ", "[", "]", ":", "#", "\n", "\r", "\t", "<", "&", '"', "\x00", "\x1b", "é", "\ud800"]
    ),
    max_size=8,
)
_rows = st.builds(
    TestResult,
    test_id=_text,
    suite=st.sampled_from(["s", "t", "s\x00", ""]),
    target=st.sampled_from(["m", "n", "m]", ""]),
    score=st.floats(0, 1) | st.just(float("nan")),
    execution_status=st.sampled_from(["ok", "quality_failure", "execution_error", "not_run"]),
    verdict=st.sampled_from([None, "pass", "fail", "skip"]),
    error=st.none() | _text,
    output=st.none() | _text,
    input=st.none() | _text,
    duration_ms=st.none() | st.floats(allow_nan=True, allow_infinity=True),
    attempt=st.none() | st.integers(0, 3),
    line=st.none() | st.integers(-1, 99),
    eval_path=st.none() | st.sampled_from(["evals/a.yaml", "/repo/evals/b.yaml", "/elsewhere/c.yaml"]),
    failure_reason_code=st.none() | _text,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(_rows, max_size=8),
    quarantine=st.sets(st.integers(0, 7), max_size=3),
    exhausted=st.booleans(),
)
def test_random_small_runs_are_what_junit_xml_writes(
    rows: list[TestResult], quarantine: set[int], exhausted: bool
) -> None:
    waived = {
        (rows[i].suite, rows[i].test_id, rows[i].target): Waiver("quarantined", f"parked {i}")
        for i in quarantine
        if i < len(rows)
    }
    _assert_same(RunSummary(rows, budget_exhausted=exhausted, started_at="2026-01-02T03:04:05Z"), waived)


def test_what_the_oracle_writes_validates_against_the_jenkins_xsd() -> None:
    # The oracle must not agree with the writer on something a reader refuses.
    if not XSD.is_file():
        pytest.skip(f"upstream schema absent at {XSD}")
    rows = [*sample_summary(FAKE_REPO).results, _fail("parked")]
    document = junit_xml_document(RunSummary(rows), FAKE_REPO, {("s", "parked", "t"): Waiver("flaky", "f")})
    assert [str(e.reason) for e in xmlschema.XMLSchema(str(XSD)).iter_errors(document)] == []


def test_junit_xml_is_a_dev_dependency_only() -> None:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    runtime = [r.replace(" ", "").lower() for r in project["dependencies"]]
    dev = [r.replace(" ", "").lower() for r in project["optional-dependencies"]["dev"]]
    assert not [r for r in runtime if r.startswith("junit-xml")], runtime
    assert [r for r in dev if r.startswith("junit-xml")], dev


def test_nothing_in_src_imports_junit_xml() -> None:
    importers = []
    for path in (REPO_ROOT / "src").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(n == "junit_xml" or n.startswith("junit_xml.") for n in names):
                importers.append(str(path.relative_to(REPO_ROOT)))
    assert importers == []
