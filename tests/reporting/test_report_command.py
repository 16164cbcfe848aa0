from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

from typer.testing import CliRunner

from agentv_ci.cli import app
from agentv_ci.errors import UsageError
from agentv_ci.model.result import TestResult
from agentv_ci.results.results_file import ResultsWriter
from tests.cli_helpers import run_cli

DATA = Path(__file__).resolve().parent / "data"


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd)


def _write(path: Path, *rows: TestResult) -> Path:
    with ResultsWriter(path) as writer:
        for row in rows:
            writer.append(row)
    return path


def test_report_rebuilds_every_file_from_agentv_index(tmp_path: Path) -> None:
    out = _cli(
        "report", str(DATA / "agentv_head.jsonl"),
        "--junit", str(tmp_path / "junit.xml"), "--sarif", str(tmp_path / "r.sarif"),
        "--markdown", str(tmp_path / "summary.md"), "--baseline", str(DATA / "agentv_base.jsonl"),
        "--repo-root", str(tmp_path),
    )  # fmt: skip
    assert out.returncode == 1, out.stderr  # longest-river, ocean-count, new-legacy-row fail
    assert "RESULT: FAILED: 2/5 tests passed (3 failed)" in out.stdout
    suites = ET.parse(tmp_path / "junit.xml").getroot().findall("testsuite")
    assert [s.get("name") for s in suites] == ["geography"]
    assert any(c.get("name") == "ocean-count [gpt]" for c in suites[0].iter("testcase"))
    props = {p.get("name"): p.get("value") for p in suites[0].find("properties").iter("property")}
    counts = (props["ocean-count [gpt].passed_attempts"], props["ocean-count [gpt].total_attempts"])
    assert counts == ("0", "5")  # 5 AgentV rows -> 1 case
    sarif = json.loads((tmp_path / "r.sarif").read_text())
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in sarif["runs"][0]["results"]
        if "locations" in r
    }
    assert uris == {"evals/geography.eval.yaml"}
    markdown = (tmp_path / "summary.md").read_text()
    assert markdown.startswith("❌ **agentv-ci: FAILED")
    assert "| broken | geography/longest-river \\[gpt\\] | 0.900 | 0.400 | -0.500 |" in markdown


def test_exit_codes_follow_the_gates(tmp_path: Path) -> None:
    green = _write(tmp_path / "green.jsonl", TestResult("a", "s", "m", 1.0, "ok", verdict="pass"))
    assert _cli("report", str(green)).returncode == 0
    errored = _write(
        tmp_path / "err.jsonl",
        TestResult("a", "s", "m", 1.0, "ok", verdict="pass"),
        TestResult("b", "s", "m", 0.0, "execution_error", error="429"),
    )
    assert _cli("report", str(errored)).returncode == 3
    assert _cli("report", str(errored), "--no-fail-on-error").returncode == 0
    low = _write(tmp_path / "low.jsonl", TestResult("a", "s", "m", 0.7, "quality_failure"))
    assert _cli("report", str(low)).returncode == 1
    assert _cli("report", str(low), "--threshold", "0.6").returncode == 0
    assert _cli("report", str(low), "--threshold", "0.6", "--min-mean-score", "0.75").returncode == 1
    assert _cli("report", str(low), "--min-pass-rate", "0").returncode == 0


def test_bad_input_exits_2_with_a_location(tmp_path: Path) -> None:
    broken = tmp_path / "index.jsonl"
    broken.write_text('{"test_id": "a", "score": 1}\n{oops\n')
    out = _cli("report", str(broken))
    assert out.returncode == 2
    assert f"{broken}:2:1: error: not valid JSON" in out.stderr
    assert "Traceback" not in out.stderr
    assert _cli("report", str(broken), "--max-regression", "0.1").returncode == 2
    assert _cli("report", str(broken), "--min-pass-rate", "1.5").returncode == 2


def test_report_in_process_prints_the_console_table(tmp_path: Path) -> None:
    green = _write(tmp_path / "run" / "index.jsonl", TestResult("a", "s", "m", 1.0, "ok", verdict="pass"))
    result = CliRunner().invoke(app, ["report", str(green.parent)])
    assert result.exit_code == 0, result.output
    assert "RESULT: PASSED: 1/1 tests passed" in result.output
    result = CliRunner().invoke(app, ["report", str(green), "--max-regression", "0.1"])
    assert isinstance(result.exception, UsageError)  # cli.run_app turns it into exit 2 (see above)
    assert result.exception.exit_code == 2


def test_threshold_flag_also_changes_the_junit_report(tmp_path: Path) -> None:
    low = _write(tmp_path / "low.jsonl", TestResult("a", "s", "m", 0.7, "quality_failure"))
    out = _cli("report", str(low), "--threshold", "0.6", "--junit", str(tmp_path / "j.xml"))
    assert out.returncode == 0, out.stdout
    case = ET.parse(tmp_path / "j.xml").getroot().find("testsuite/testcase")
    assert case is not None and case.find("failure") is None


def test_threshold_flag_does_not_turn_baseline_failures_into_fixes(tmp_path: Path) -> None:
    rows = [
        TestResult("a", "s", "m", 0.9, "ok", verdict="pass"),
        TestResult("b", "s", "m", 0.6, "quality_failure", verdict="fail"),
    ]
    for name in ("base", "head"):
        with ResultsWriter(tmp_path / name / "index.jsonl") as writer:
            for row in rows:
                writer.append(row)
    md = tmp_path / "summary.md"
    result = CliRunner().invoke(
        app,
        [
            *("report", str(tmp_path / "head"), "--baseline", str(tmp_path / "base")),
            *("--threshold", "0.5", "--markdown", str(md)),
        ],
    )
    assert result.exit_code == 0, result.output
    text = md.read_text(encoding="utf-8")
    assert "| fixed |" not in text
    assert "No test changed beyond noise." in text


def test_sarif_category_flag(tmp_path: Path) -> None:
    with ResultsWriter(tmp_path / "run" / "index.jsonl") as writer:
        writer.append(TestResult("a", "s", "m", 0.1, "quality_failure", eval_path="e.yaml", line=1))
    out = tmp_path / "r.sarif"
    args = ["report", str(tmp_path / "run"), "--sarif", str(out), "--sarif-category", "evals/pr"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    assert json.loads(out.read_text(encoding="utf-8"))["runs"][0]["automationDetails"] == {"id": "evals/pr/"}


def _code(*args: str) -> int:
    result = CliRunner().invoke(app, ["report", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code


def test_every_gate_flag_and_exit_code(tmp_path: Path) -> None:
    def rows(name: str, *results: TestResult) -> str:
        return str(_write(tmp_path / f"{name}.jsonl", *results))

    def ok(test_id: str, score: float = 1.0, suite: str = "s", **kw: object) -> TestResult:
        return TestResult(test_id, suite, "m", score, "ok", verdict="pass", **kw)  # type: ignore[arg-type]

    def bad(test_id: str, score: float, suite: str = "s") -> TestResult:
        return TestResult(test_id, suite, "m", score, "quality_failure")

    def err(test_id: str) -> TestResult:
        return TestResult(test_id, "s", "m", 0.0, "execution_error", error="boom")

    mixed = rows("mixed", ok("a1", suite="a"), ok("a2", suite="a"), ok("b1", suite="b"), bad("b2", 0.5, "b"))
    assert _code(mixed) == 1  # default: any failing test fails the run (never AgentV's silent exit 0)
    assert _code(mixed, "--min-pass-rate", "0.75") == 1  # suite b is at 50%
    assert _code(mixed, "--min-pass-rate", "0.5") == 0  # the pass-rate gate tolerates b2
    assert _code(mixed, "--threshold", "0.5") == 0
    assert _code(mixed, "--threshold", "0.5", "--min-mean-score", "0.8") == 1  # suite b mean 0.75
    assert _code(mixed, "--threshold", "0.5", "--min-mean-score", "0.75") == 0
    # the eval file's experiment.threshold arrives as the row's threshold and verdict
    assert _code(rows("own", ok("a", 0.6, threshold=0.5))) == 0
    # --max-regression against a baseline (needs one: bad input otherwise)
    base = rows("base", ok("a1", suite="a"), ok("a2", suite="a"), ok("b1", suite="b"), ok("b2", suite="b"))
    head = rows("head", ok("a1", suite="a"), ok("a2", suite="a"), ok("b1", suite="b"), ok("b2", 0.85, "b"))
    assert _code(head, "--baseline", base, "--max-regression", "0.1") == 1  # b2 fell 0.15
    assert _code(head, "--baseline", base, "--max-regression", "0.2") == 0
    assert _code(head, "--baseline", base) == 0  # reported, not gated
    # errors: inconclusive by default, ignorable, but an all-errored run is never green
    some_errors = rows("some", ok("a"), err("b"))
    assert _code(some_errors) == 3
    assert _code(some_errors, "--fail-on-error") == 3
    assert _code(some_errors, "--no-fail-on-error") == 0
    all_errors = rows("all", err("a"), err("b"))
    assert _code(all_errors) == 3 and _code(all_errors, "--no-fail-on-error") == 3
    # tests that did not run (budget) are never green, with or without summary.json
    unrun = rows("unrun", ok("a"), TestResult("b", "s", "m", 0.0, "not_run", verdict="skip"))
    assert _code(unrun) == 3 and _code(unrun, "--no-fail-on-error") == 3
    # a quality failure outranks inconclusive
    assert _code(rows("both", bad("a", 0.1), err("b"))) == 1


def test_agentv_rows_without_verdict_or_threshold_fail_the_gate(tmp_path: Path) -> None:
    # AgentV v4.42.4 exits 0 here without --threshold; agentv-ci judges score >= 0.8 and fails
    index = tmp_path / "index.jsonl"
    index.write_text('{"test_id":"a","suite":"s","target":"t","score":1}\n{"test_id":"b","score":0.5}\n')
    assert _code(str(index)) == 1
