"""`grade` rows of the built-in text checks stay byte for byte what they were (issue 31).

The text graders build their expected text and messages once per grader and skip the redaction work
when the run knows no secret; these rows (every text check, passing and failing, negated, with regex
flags, non-ASCII answers, long answers cut) must not change by a byte, timestamps and durations aside.
`tests/golden/text_checks.index.jsonl` was written by the code before that change. With a secret in
the environment, the same checks must still mask it wherever it appears.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from tests.cli_helpers import run_cli

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "text_checks.index.jsonl"
SECRET = "tok-Sekret0123456789abcdefZZ"

CHECKS = """\
  - type: contains
    value: Paris
  - type: icontains
    value: PARIS
  - type: contains-any
    value: [Lyon, Paris]
  - type: contains-all
    value: [capital, Paris]
  - type: icontains-any
    value: [LYON, PARIS]
  - type: icontains-all
    value: [CAPITAL, FRANCE]
  - type: starts-with
    value: "  The capital"
  - type: ends-with
    value: Paris.
  - type: equals
    value: " The capital of France is Paris. "
  - type: regex
    value: 'capital of (\\w+)'
  - type: regex
    value: 'PARIS'
    flags: i
  - type: contains
    value: Paris
    negate: true
  - type: regex
    value: 'cap.tal'
    negate: true
"""

ANSWERS = [
    "The capital of France is Paris.",
    "Lyon is a city; this answer names no capital at all.",
    "The capital of France is Paris 🗼 — très bien, naïve café.",
    "x" * 700 + " The capital of France is Paris. " + "y" * 700,
    "Parisian\x1b[31m red \x07 text\n second line\tand tab",
]


def _project(root: Path, checks: str, answers: list[str]) -> Path:
    tests = "".join(f"  - id: t{i}\n    input: question {i}\n" for i in range(len(answers)))
    (root / "checks.yaml").write_text(f"name: text-checks\nassertions:\n{checks}tests:\n{tests}")
    lines = [json.dumps({"test_id": f"t{i}", "output": a}) for i, a in enumerate(answers)]
    (root / "responses.jsonl").write_text("\n".join(lines) + "\n")
    return root


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTV", "GITHUB"))}
    return {**env, **extra}


def _rows(root: Path, env: dict[str, str]) -> str:
    done = run_cli("grade", "checks.yaml", "--responses", "responses.jsonl", "-o", "out", cwd=root, env=env)
    assert done.returncode == 1, done.stdout + done.stderr  # some checks fail: the gate fails
    text = (root / "out" / "index.jsonl").read_text(encoding="utf-8")
    text = re.sub(r'"timestamp":"[^"]*"', '"timestamp":"T"', text)
    return re.sub(r'"duration_ms":[0-9.e-]+', '"duration_ms":0', text)


def test_text_check_rows_are_byte_identical_to_the_golden_rows(tmp_path: Path) -> None:
    rows = _rows(_project(tmp_path, CHECKS, ANSWERS), _env())
    assert rows == GOLDEN.read_text(encoding="utf-8")
    scores = [s for row in map(json.loads, rows.splitlines()) for s in row["scores"]]
    assert len(scores) == 13 * len(ANSWERS)
    assert {s["verdict"] for s in scores} == {"pass", "fail"}


def test_a_secret_in_a_checks_value_is_masked_in_every_row(tmp_path: Path) -> None:
    checks = f"""\
  - type: contains
    value: {SECRET}
  - type: equals
    value: {SECRET}
  - type: regex
    value: '{SECRET}'
  - type: contains-all
    value: [{SECRET}, Paris]
"""
    answers = [f"the key is {SECRET} in Paris", SECRET, "no key here"]
    rows = _rows(_project(tmp_path, checks, answers), _env(BENCH_API_KEY=SECRET))
    assert SECRET not in rows and SECRET[:12] not in rows and SECRET[-12:] not in rows
    parsed = [json.loads(line) for line in rows.splitlines()]
    expected = [[a["expected"] for s in row["scores"] for a in s["assertions"]] for row in parsed]
    for row in expected:  # what each check wanted, masked for every answer, passing or not
        assert row[:3] == ['"***"', '"***"', "/***/"]
    assert [row[3] for row in expected] == ['["***", "Paris"]', '["Paris"]', '["***", "Paris"]']
    verdicts = [[s["verdict"] for s in row["scores"]] for row in parsed]
    assert verdicts == [  # masked in the rows, compared as written
        ["pass", "fail", "pass", "pass"],
        ["pass", "pass", "pass", "fail"],
        ["fail", "fail", "fail", "fail"],
    ]
