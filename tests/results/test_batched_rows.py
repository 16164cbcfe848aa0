"""`write_rows` writes what `ResultsWriter.append` writes, row after row, in batches."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentv_ci.model.result import AssertionResult, GraderResult, TestResult
from agentv_ci.results import batched_rows
from agentv_ci.results.batched_rows import write_rows
from agentv_ci.results.results_writer import ResultsWriter
from agentv_ci.security.redaction import register_secret


def _rows() -> list[TestResult]:
    check = GraderResult("c", "contains", 1.0, "pass", assertions=[AssertionResult("found", True)])
    return [
        TestResult("a", "s", "m", 1.0, "ok", verdict="pass", output="plain", scores=[check]),
        TestResult("b", "s", "m", 0.0, "ok", verdict="fail", output="half an emoji \ud83d!"),
        TestResult("c", "s", "m", 1.0, "ok", verdict="pass", output="key sk-batched-secret-98765 here"),
        TestResult("d", "s", "m", 1.0, "ok", verdict="pass", output="ünïcode ✓", metadata={"k": [1, 2]}),
    ]


def _one_at_a_time(path: Path, rows: list[TestResult]) -> bytes:
    with ResultsWriter(path) as writer:
        for row in rows:
            writer.append(row)
    return path.read_bytes()


@pytest.mark.parametrize("batch_bytes", [1, 1 << 20])
def test_the_bytes_are_those_of_one_row_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch_bytes: int
) -> None:
    monkeypatch.setattr(batched_rows, "BATCH_BYTES", batch_bytes)
    register_secret("sk-batched-secret-98765")
    rows = _rows() * 3
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "index.jsonl").write_bytes(b'{"kept":"an earlier line"}\n')  # appended to
    write_rows(tmp_path / "out" / "index.jsonl", rows)
    written = (tmp_path / "out" / "index.jsonl").read_bytes()
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "index.jsonl").write_bytes(b'{"kept":"an earlier line"}\n')
    assert written == _one_at_a_time(tmp_path / "one" / "index.jsonl", rows)
    assert b"sk-batched-secret" not in written and b"half an emoji ?!" in written
    assert written.count(b"\n") == len(rows) + 1


def test_without_secrets_rows_are_written_as_encoded(tmp_path: Path) -> None:
    rows = [r for r in _rows() if r.test_id != "b"]
    write_rows(tmp_path / "new" / "index.jsonl", rows)
    assert (tmp_path / "new" / "index.jsonl").read_bytes() == _one_at_a_time(tmp_path / "old.jsonl", rows)
