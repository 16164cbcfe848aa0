"""Report text is bounded whatever one test holds (issue 19, item 9): a huge failing answer with
hundreds of failing graders gives a JUnit testcase, a Markdown detail and SARIF messages of a bounded
size (reporting.details sets the limits for all three), and the SARIF still validates. Through the
CLI with a real cli-target subprocess."""

from __future__ import annotations

import json
import os
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from jsonschema import Draft4Validator

from agentv_ci.model.result import AssertionResult, GraderResult, TestResult
from agentv_ci.reporting.details import REPORT, SUMMARY, failure_text, grader_failure_text
from tests.cli_helpers import run_cli

PY = sys.executable
SCHEMA = Path("/work/shared/schemas/sarif-schema-2.1.0.json")
if not SCHEMA.is_file():
    SCHEMA = Path(__file__).resolve().parent.parent / "schemas" / "sarif-schema-2.1.0.json"
GRADERS = 300


def test_a_huge_failing_answer_with_many_failing_graders_gives_bounded_reports(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".agentv").mkdir(parents=True)
    (project / ".git").mkdir()
    (project / "agent.py").write_text("import sys\nopen(sys.argv[1], 'w').write('nope ' * 1_000_000)\n")
    (project / ".agentv" / "targets.yaml").write_text(
        f"targets:\n  - name: agent\n    provider: cli\n    command: {PY} agent.py {{OUTPUT_FILE}}\n"
    )
    graders = "".join(f"      - {{type: contains, value: missing-{i}}}\n" for i in range(GRADERS))
    graders += "      - {type: equals, value: expected}\n      - {type: regex, value: '^yes'}\n"
    (project / "big.eval.yaml").write_text(
        "execution: {target: agent}\ntests:\n  - id: huge\n    input: say a lot\n    assertions:\n" + graders
    )
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTV_CI_"))}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    reports = ["--junit", str(tmp_path / "j.xml"), "--markdown", str(tmp_path / "s.md"),
               "--sarif", str(tmp_path / "r.sarif")]  # fmt: skip
    done = run_cli("run", str(project / "big.eval.yaml"), "-o", str(out), *reports, env=env, timeout=180)
    assert done.returncode == 1, done.stdout + done.stderr  # the run completed; the test failed
    # JUnit: the failure holds the graders (capped together, the rest counted) and an answer excerpt
    case = ET.parse(tmp_path / "j.xml").getroot().find(".//testcase")
    assert case is not None
    failure = case.find("failure")
    assert failure is not None and failure.text is not None
    assert "more failing grader(s)" in failure.text
    assert len(failure.text) <= REPORT.graders + REPORT.answer + 200, len(failure.text)
    system_out = case.find("system-out")
    assert system_out is not None and len(system_out.text or "") <= REPORT.input + REPORT.answer + 100
    assert (tmp_path / "j.xml").stat().st_size < 20_000
    # Markdown: the detail of that test is bounded the same way
    markdown = (tmp_path / "s.md").read_text()
    assert len(markdown) < 12_000 and "Failing graders:" in markdown
    # SARIF: one finding per failing grader, each message capped, and the log is valid
    sarif = json.loads((tmp_path / "r.sarif").read_text())
    Draft4Validator(json.loads(SCHEMA.read_text())).validate(sarif)
    results = sarif["runs"][0]["results"]
    assert len(results) == GRADERS + 2
    assert max(len(r["message"]["text"]) for r in results) <= REPORT.grader
    assert any(re.search(r"nope nope", r["message"]["text"]) for r in results)  # evidence is kept, cut


def _grader(i: int, evidence: str, count: int = 50) -> GraderResult:
    assertions = [AssertionResult(f"contains x{i}", False, evidence) for _ in range(count)]
    return GraderResult(f"g{i}", "contains", 0.0, "fail", assertions=assertions)


def test_failure_text_is_capped_in_total_and_counts_the_graders_left_out() -> None:
    result = TestResult("t", "s", "a", 0.0, "quality_failure",
                        scores=[_grader(i, "e" * 100_000) for i in range(1000)])  # fmt: skip
    text = failure_text(result)
    assert len(text) <= REPORT.graders + 60 and text.endswith("more failing grader(s)")
    assert len(failure_text(result, SUMMARY)) <= SUMMARY.graders + 60
    one = grader_failure_text(result.scores[0])
    assert len(one) == REPORT.grader and one.endswith("…")
    small = TestResult("t", "s", "a", 0.0, "quality_failure", scores=[_grader(0, "short", 20)])
    assert failure_text(small).count("x0 - short") == 20  # nothing cut when it fits
