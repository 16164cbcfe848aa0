"""Failed checks say what was expected and what came back, through the CLI, in every report:
the Markdown summary, JUnit (message and body) and SARIF (validated against the OASIS schema)."""

from __future__ import annotations

import json
import os
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from tests.cli_helpers import run_cli
from tests.conftest import SHARED_SCHEMAS
from tests.fakes.llm_server import Call, FakeLlmServer

ORDER = '{"quantity": 5, "sku": "A-1", "note": "<b>@team</b>"}'


def _project(root: Path, eval_yaml: str, *, response: str = ORDER, extra_targets: str = "") -> Path:
    (root / ".git").mkdir(parents=True)  # the search for targets.yaml stops at the repository root
    (root / ".agentv").mkdir()
    (root / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: mock\n"
        f"    response: {json.dumps(response)}\n{extra_targets}"
    )
    (root / "t.eval.yaml").write_text(textwrap.dedent(eval_yaml))
    return root


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTV_CI_"))}
    return {**env, **extra}


def _run(root: Path, *, env: dict[str, str] | None = None) -> tuple[int, str, str, dict[str, Any]]:
    done = run_cli(
        "run", "t.eval.yaml", "-o", "out", "--markdown", "summary.md", "--junit", "junit.xml",
        "--sarif", "report.sarif", cwd=root, env=env or _env(), timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr  # the gate failed: never a pass
    markdown = (root / "summary.md").read_text()
    junit = (root / "junit.xml").read_text()
    sarif = json.loads((root / "report.sarif").read_text())
    return done.returncode, markdown, junit, sarif


FIELD_EVAL = """\
    tests:
      - id: order
        input: how many?
        expected_output: '{"quantity": 3, "sku": "A-1", "note": "<b>@team</b>"}'
        assertions:
          - type: field-accuracy
            name: fields
            fields:
              - path: quantity
              - path: sku
              - path: note
"""


def test_a_failed_field_check_shows_path_expected_and_actual_in_markdown_junit_and_sarif(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path, FIELD_EVAL)
    _, markdown, junit, sarif = _run(root)

    # Markdown: under the failed check, the path with both values (inside a fence: no HTML, no ping)
    assert "x quantity (value mismatch)\n      expected: 3\n      actual:   5" in markdown
    assert "x sku" not in markdown  # a passing field is not shown as failed

    # JUnit: the message leads with the mismatch; the body lists every failed check
    case = ET.fromstring(junit).find(".//testcase")
    assert case is not None
    failure = case.find("failure")
    assert failure is not None
    message = failure.get("message", "")
    assert message.startswith("quantity: expected 3, got 5; score 0.667 < threshold 0.80"), message
    assert len(message) < 200
    body = failure.text or ""
    assert "x quantity (value mismatch)" in body and "expected: 3" in body and "actual:   5" in body

    # SARIF: valid against the 2.1.0 schema, the finding's message holds path, expected and actual
    from jsonschema import Draft4Validator

    schema = json.loads((SHARED_SCHEMAS / "sarif-schema-2.1.0.json").read_text())
    assert not list(Draft4Validator(schema).iter_errors(sarif))
    [finding] = sarif["runs"][0]["results"]
    text = finding["message"]["text"]
    assert finding["ruleId"] == "agentv/field-accuracy"
    assert "x quantity (value mismatch)" in text and "expected: 3" in text and "actual:   5" in text

    # the row keeps them structured, for any reporter
    row = json.loads((root / "out" / "index.jsonl").read_text())
    [failed] = [a for a in row["scores"][0]["assertions"] if not a["passed"]]
    assert failed == {
        "text": "quantity (value mismatch)",
        "passed": False,
        "expected": "3",
        "actual": "5",
        "path": "quantity",
    }


def test_a_huge_expected_value_is_cut_in_every_report(tmp_path: Path) -> None:
    long_sku = "Z" * 5000
    root = _project(
        tmp_path,
        FIELD_EVAL.replace('"sku": "A-1"', f'"sku": "{long_sku}"'),
        response=ORDER.replace("A-1", "B-2"),
    )
    _, markdown, junit, sarif = _run(root)
    row = json.loads((root / "out" / "index.jsonl").read_text())
    stored = next(a for a in row["scores"][0]["assertions"] if a.get("path") == "sku")
    assert stored["actual"] == '"B-2"'
    assert len(stored["expected"]) <= 300 and "chars cut" in stored["expected"]
    assert long_sku not in markdown and long_sku not in junit and long_sku not in json.dumps(sarif)
    assert 'actual:   "B-2"' in markdown


TEXT_EVAL = """\
    tests:
      - id: capital
        input: capital of France?
        assertions:
          - {type: contains, name: has-paris, value: Paris}
          - {type: icontains, name: no-lyon, value: lyon, negate: true}
          - {type: regex, name: year, value: '\\d{4}'}
          - {type: equals, name: exact, value: Paris}
"""


def test_text_checks_show_the_value_the_pattern_and_what_was_found(tmp_path: Path) -> None:
    root = _project(tmp_path, TEXT_EVAL, response="The capital is LYON, obviously.")
    _, markdown, junit, _ = _run(root)
    # contains: the missing value and what came back
    assert 'x Output does not contain "Paris"\n      expected: "Paris"\n' in markdown
    assert 'actual:   "The capital is LYON, obviously."' in markdown
    # a negated icontains: what it must not hold, and what was found where
    assert 'expected: not "lyon"\n      actual:   "The capital is LYON, obviously."' in markdown
    # regex: the pattern
    assert "expected: /\\d{4}/\n" in markdown
    # equals: both sides
    assert 'x Output does not equal "Paris"' in markdown
    failure = ET.fromstring(junit).find(".//failure")
    assert failure is not None
    assert failure.get("message", "").startswith('has-paris: expected "Paris", got "The capital is LYON')
    assert "(and 3 more failed checks)" in failure.get("message", "")


def test_a_tool_trajectory_mismatch_shows_the_expected_and_the_actual_call(tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        """\
        tests:
          - id: look
            input: look it up
            assertions:
              - type: tool-trajectory
                name: calls
                mode: exact
                expected:
                  - tool: search
                    args: {q: refunds}
                  - tool: answer
        """,
    )
    (root / "answers.jsonl").write_text(
        json.dumps(
            {
                "test_id": "look",
                "output": "done",
                "tool_calls": [{"tool": "search", "input": {"q": "returns"}}, {"tool": "answer"}],
            }
        )
        + "\n"
    )
    answers = ("--responses", "answers.jsonl")
    graded = run_cli("grade", "t.eval.yaml", *answers, "-o", "out", cwd=root, timeout=120)
    assert graded.returncode == 1, graded.stdout + graded.stderr
    done = run_cli("report", "out", "--markdown", "summary.md", cwd=root, env=_env(), timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    markdown = (root / "summary.md").read_text()
    assert (
        'x Position 0: search args mismatch\n      expected: search({"q": "refunds"})\n'
        '      actual:   search({"q": "returns"})'
    ) in markdown


def test_an_llm_grader_failure_shows_the_judge_reason(tmp_path: Path) -> None:
    def responder(call: Call) -> str:
        return json.dumps(
            {
                "score": 0.2,
                "assertions": [{"text": "names the refund window", "passed": False}],
                "reasoning": "The answer never says the refund window is 30 days.",
            }
        )

    with FakeLlmServer(responder) as server:
        judge = (
            f"  - name: judge\n    provider: openai\n    model: gpt-test\n"
            f"    base_url: {server.base_url}\n    api_key: ${{{{ OPENAI_API_KEY }}}}\n"
        )
        root = _project(
            tmp_path,
            """\
            execution:
              target: default
            tests:
              - id: refund
                input: what is the refund policy?
                criteria: says the refund window is 30 days
                assertions:
                  - {type: llm-grader, name: policy, target: judge}
            """,
            response="We do refunds.",
            extra_targets=judge,
        )
        _, markdown, junit, sarif = _run(root, env=_env(OPENAI_API_KEY="k"))
        assert server.calls  # the judge was asked
    reason = "The answer never says the refund window is 30 days."
    assert "x names the refund window" in markdown and f"reason: {reason}" in markdown
    failure = ET.fromstring(junit).find(".//failure")
    assert failure is not None and failure.get("message", "").startswith(f"policy: {reason}")
    assert reason in sarif["runs"][0]["results"][0]["message"]["text"]
