"""`agentv-ci grade` grades an answer whose graders read its text alone in one call (`grade_now`, the
run's answer lane), not through `grade_test`: the rows are exactly those of the usual path, and a
test with another grader still takes it (issue 31)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agentv_ci.model.result import TestResult
from agentv_ci.running import offline_grading

EVAL = """\
name: lane
assertions:
  - type: contains
    value: Paris
  - type: regex
    value: 'capital of (\\w+)'
    flags: i
  - type: equals
    value: The capital of France is Paris.
    negate: true
tests:
  - id: plain
    input: q1
  - id: own
    input: q2
    assertions:
      - type: icontains
        value: LYON
  - id: coded
    input: q3
    assertions:
      - type: is-json
"""

ANSWERS = [
    ("plain", "The capital of France is Paris!"),
    ("plain", "Lyon, maybe."),
    ("own", "Lyon is not the capital"),
    ("coded", '{"text": "the capital of France is Paris"}'),
    ("coded", "not json"),
]


def _timeless(row: TestResult) -> TestResult:
    scores = [msgspec.structs.replace(s, duration_ms=None) for s in row.scores]
    return msgspec.structs.replace(row, timestamp="", start_time=None, end_time=None, scores=scores)


def _grade(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch, *, lane: bool
) -> tuple[list[Any], int]:
    """The rows `grade` writes for ANSWERS, and how many answers `grade_test` graded."""
    root = tmp_path / name
    root.mkdir()
    (root / "lane.eval.yaml").write_text(EVAL, encoding="utf-8")
    lines = [json.dumps({"test_id": t, "output": a}) for t, a in ANSWERS]
    (root / "responses.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.chdir(root)
    usual = 0
    real = offline_grading.grade_test

    async def counted(*args: Any, **kwargs: Any) -> TestResult:
        nonlocal usual
        usual += 1
        return await real(*args, **kwargs)

    with monkeypatch.context() as patched:
        patched.setattr(offline_grading, "grade_test", counted)
        if not lane:
            patched.setattr(offline_grading, "answer_graders", lambda test, eval_path: None)
        outcome = asyncio.run(
            offline_grading.run_offline_grading(
                Path("lane.eval.yaml"),
                Path("responses.jsonl"),
                output=root / "out",
                threshold=None,
                grader_target=None,
                targets_file=None,
            )
        )
    return [_timeless(r) for r in outcome.results], usual


def test_text_graders_grade_in_the_lane_and_rows_are_the_usual_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lane_rows, lane_usual = _grade(tmp_path, "lane", monkeypatch, lane=True)
    usual_rows, usual_usual = _grade(tmp_path, "usual", monkeypatch, lane=False)
    assert lane_rows == usual_rows
    assert [r.attempt for r in lane_rows] == [0, 1, 0, 0, 1]  # a test's answers are its attempts
    assert [r.verdict for r in lane_rows] == ["pass", "fail", "fail", "pass", "fail"]
    assert usual_usual == len(ANSWERS)
    # `plain` and `own` read the answer's text alone; `coded` has a grader that reads more (is-json)
    assert lane_usual == 2
