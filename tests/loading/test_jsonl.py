from __future__ import annotations

from pathlib import Path

import pytest

from agentv_ci.loading import jsonl
from agentv_ci.loading.suite_loader import load_suite


def _dataset(tmp_path: Path, lines: list[str], sidecar: str = "name: data\n") -> Path:
    (tmp_path / "data.yaml").write_text(sidecar)
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_each_problem_is_reported_at_its_own_line(tmp_path: Path) -> None:
    path = _dataset(
        tmp_path,
        [
            '{"id": "a", "criteria": "x", "input": "hi"}',
            '{"id": "b", "criteria": "x", "input": "hi", "expected_outptu": "y"}',
            '["not", "an", "object"]',
            '{"id": "d", "criteria": 5, "input": "hi"}',
            '{"id": "e", "criteria": "x", "input": "hi", "assertions": [{"type": "regex", "value": "("}]}',
            '{"id": "a", "criteria": "dup", "input": "hi"}',
            '{"id": "g", "input": "oops" ',
        ],
    )
    result = load_suite(path, repo_root=tmp_path, env={})
    got = [(d.code, d.line, d.col) for d in result.diagnostics]
    assert got == [("W101", 2, 45), ("E101", 3, 1), ("E101", 4, 25), ("E106", 5, 87), ("E105", 6, 8),
                   ("E005", 7, 28)]  # fmt: skip
    assert all(d.file == str(path) for d in result.diagnostics)
    assert result.suite is not None
    assert [t.id for t in result.suite.tests] == ["a", "b", "d", "e", "a"]
    assert result.diagnostics[0].hint == "did you mean `expected_output`?"


def test_env_placeholders_in_jsonl_lines(tmp_path: Path) -> None:
    path = _dataset(tmp_path, ['{"id": "a", "criteria": "${{ CRIT }}", "input": "${{ Q }}"}'])
    result = load_suite(path, repo_root=tmp_path, env={"CRIT": "is right", "Q": "why?"})
    assert result.suite is not None
    test = result.suite.tests[0]
    assert (test.criteria, test.input[0].content) == ("is right", "why?")


def test_sidecar_settings_apply_and_line_execution_overrides(tmp_path: Path) -> None:
    path = _dataset(
        tmp_path,
        ['{"id": "a", "criteria": "x", "input": "hi", "execution": {"target": "other"}}'],
        "name: data\nexecution:\n  target: main\n  threshold: 0.6\n"
        "assertions:\n  - type: contains\n    value: hi\n",
    )
    result = load_suite(path, repo_root=tmp_path, env={})
    assert result.suite is not None
    test = result.suite.tests[0]
    assert (test.execution.target, test.execution.threshold) == ("other", 0.6)
    assert [g.type for g in test.graders] == ["contains"]
    assert {Path(p).name for p in result.suite.dependencies} >= {"data.jsonl", "data.yaml"}


def test_blocks_of_lines_find_what_only_one_line_of_a_later_block_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonl, "BLOCK_BYTES", 200)  # a few lines a block
    lines = [f'{{"id": "t{i}", "criteria": "x", "input": "q {i}"}}' for i in range(40)]
    lines[17] = '{"id": "big", "criteria": "x", "input": "q", "metadata": {"n": 123456789012345678901}}'
    lines[29] = '{"id": "env", "criteria": "${{ CRIT }}", "input": "q"}'
    lines[33] = ""
    result = load_suite(_dataset(tmp_path, lines), repo_root=tmp_path, env={"CRIT": "is right"})
    assert [(d.code, d.line) for d in result.diagnostics] == [("E005", 18)]
    assert "holds the integer 123456789012345678901" in result.diagnostics[0].message
    assert result.suite is not None
    tests = {t.id: t for t in result.suite.tests}
    assert len(tests) == 38 and "big" not in tests
    assert tests["env"].criteria == "is right" and tests["env"].location is not None
    assert tests["env"].location.line == 30 and tests["t39"].location.line == 40
