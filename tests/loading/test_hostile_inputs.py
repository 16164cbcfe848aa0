"""Every hostile input ends in a located diagnostic: NUL bytes, deep nesting, huge files and lines."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentv_ci.json_limits import deep_json_offset, may_hold_oversized_int
from agentv_ci.loading import documents, jsonl
from agentv_ci.loading.suite_loader import load_suite


def diagnostics(path: Path) -> list[tuple[str, int, int, str]]:
    return [
        (d.code, d.line, d.col, d.message)
        for d in load_suite(path, repo_root=path.parent, env={}).diagnostics
    ]


def test_a_nul_byte_in_yaml_is_located_at_its_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "e.eval.yaml"
    path.write_bytes(b"tests:\n  - id: t\n    input: ab\x00cd\n")
    [(code, line, col, message)] = diagnostics(path)
    assert (code, line, col) == ("E002", 3, 14)
    assert "U+0000" in message and "position" not in message


def test_the_column_of_a_control_character_counts_characters_not_bytes(tmp_path: Path) -> None:
    path = tmp_path / "e.eval.yaml"
    path.write_text("tests:\n  - id: t\n    input: éé€\x07\n", encoding="utf-8")
    [(code, line, col, _)] = diagnostics(path)
    assert (code, line, col) == ("E002", 3, 15)


def test_a_deeply_nested_jsonl_value_is_a_located_diagnostic_not_a_crash(tmp_path: Path) -> None:
    """The issue's case: a 20,000-deep JSON value in a JSONL case was an internal error (exit 4)."""
    (tmp_path / ".git").mkdir()
    deep = '{"id": "deep", "input": "x", "metadata": ' + "[" * 20_000 + "]" * 20_000 + "}"
    (tmp_path / "cases.jsonl").write_text('{"id": "ok", "input": "y"}\n' + deep + "\n")
    found = diagnostics(tmp_path / "cases.jsonl")
    assert ("E005", 2, 41 + 200) in [(c, line, col) for c, line, col, _ in found]
    done = subprocess.run(
        [sys.executable, "-m", "agentv_ci", "validate", "cases.jsonl"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "cases.jsonl:2:241: error[E005]: line 2 is nested too deeply" in done.stdout
    assert "Traceback" not in done.stderr


def test_deeply_nested_yaml_is_a_located_diagnostic(tmp_path: Path) -> None:
    path = tmp_path / "e.eval.yaml"
    path.write_text("tests: " + "[" * 20_000 + "]" * 20_000 + "\n")
    [(code, line, col, message)] = diagnostics(path)
    assert code == "E004" and line == 1 and col > 1 and "nesting depth" in message


def test_a_file_over_the_size_cap_is_refused_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(documents, "MAX_DOCUMENT_BYTES", 1024)
    path = tmp_path / "e.eval.yaml"
    path.write_text("tests:\n" + "  - id: t\n    input: x\n    criteria: y\n" * 100)
    [(code, _, _, message)] = diagnostics(path)
    assert code == "E001" and "larger than" in message


def test_jsonl_size_caps_for_the_file_and_for_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", 100)
    path = tmp_path / "cases.jsonl"
    path.write_text(
        '{"id": "a", "input": "x", "criteria": "y"}\n' + '{"id": "b", "input": "' + "z" * 200 + '"}\n'
    )
    found = diagnostics(path)
    assert [(c, line) for c, line, _, _ in found] == [("E005", 2)]
    monkeypatch.setattr(jsonl, "MAX_JSONL_BYTES", 100)
    assert [c for c, _, _, _ in diagnostics(path)] == ["E001"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (b"[" * 5 + b"]" * 5, None),
        (b"[" * 6, 5),
        (b'{"a": "' + b"[" * 50 + b'"}', None),  # brackets inside a string do not nest
        (b'["\\"' + b"[" * 50 + b'"]', None),  # nor after an escaped quote
        (b'["\\\\", ' + b"[" * 10, 11),  # an escaped backslash ends before the quote
    ],
)
def test_deep_json_offset_counts_structure_only(text: bytes, expected: int | None) -> None:
    assert deep_json_offset(text, 5) == expected


@given(
    st.binary(max_size=80) | st.lists(st.sampled_from([b"1", b"9", b"0", b"a", b"-", b"\xff"])).map(b"".join)
)
def test_may_hold_oversized_int_is_true_exactly_on_a_run_of_19_digits(data: bytes) -> None:
    # The fast check must agree with the plain definition: a false "no" would let a >64-bit
    # integer through as a number.
    assert may_hold_oversized_int(data) is (re.search(rb"[0-9]{19}", data) is not None)


def test_may_hold_oversized_int_at_the_edges() -> None:
    assert may_hold_oversized_int(b'{"n": 1234567890123456789}')
    assert not may_hold_oversized_int(b'{"n": 123456789012345678}')
    assert may_hold_oversized_int(b"0" * 19)
    assert not may_hold_oversized_int(b"1" * 18 + b"x" + b"2" * 18)
