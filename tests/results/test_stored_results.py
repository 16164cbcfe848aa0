"""A run's results read back from its index.jsonl (results/stored_results.py): every report written
from the stored rows is byte for byte the report of the same rows held in memory, whatever the sort
has to spill to disk."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from agentv_ci.errors import LoadError
from agentv_ci.gating import GateOptions, decide
from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.reporting.console import render_console
from agentv_ci.reporting.junit import render_junit
from agentv_ci.reporting.markdown import render_markdown
from agentv_ci.reporting.sarif import render_sarif
from agentv_ci.results import stored_results
from agentv_ci.results.results_file import ResultsWriter, aggregate_attempts, read_results
from agentv_ci.results.stored_results import StoredResults
from agentv_ci.results.tally import ResultsTally
from tests.reporting.golden import FAKE_REPO
from tests.reporting.sample_runs import sample_results, sample_summary


def _store(rows: list[TestResult], path: Path, *, unique_keys: bool, own: bool = False) -> StoredResults:
    tally = ResultsTally()
    with ResultsWriter(path) as writer:
        for row in rows:
            tally.add(writer.append(row))
    return StoredResults(path, tally, count=len(rows), unique_keys=unique_keys, own=own)


def _many(rows: list[TestResult]) -> list[TestResult]:
    """The sample rows many times over, under other ids (keys stay unique), in a scrambled order."""
    out = [msgspec.structs.replace(row, test_id=f"{row.test_id}-{n:03d}") for n in range(40) for row in rows]
    return out[2::3] + out[::3][::-1] + out[1::3]  # a permutation


@pytest.mark.parametrize("own", [False, True])
@pytest.mark.parametrize("chunk", [5, 50_000])
def test_reports_from_stored_rows_equal_reports_from_rows_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int, own: bool
) -> None:
    monkeypatch.setattr(stored_results, "SORT_CHUNK", chunk)  # 5: the key sort spills and merges
    in_memory = sample_summary(FAKE_REPO)
    rows = _many(list(in_memory.results))
    listed = msgspec.structs.replace(in_memory, results=rows)
    stored = msgspec.structs.replace(
        in_memory, results=_store(rows, tmp_path / "index.jsonl", unique_keys=True, own=own)
    )
    written = read_results(tmp_path / "index.jsonl")  # a lone surrogate in the sample is written as "?"
    assert list(stored.results) == written and len(stored.results) == len(rows)
    assert stored.results[17] == written[17] and stored.results[-1] == written[-1]
    assert render_junit(stored, FAKE_REPO) == render_junit(listed, FAKE_REPO)
    assert render_sarif(stored, FAKE_REPO) == render_sarif(listed, FAKE_REPO)
    decision = decide(stored, GateOptions())
    assert decision.reasons == decide(listed, GateOptions()).reasons
    assert render_console(stored, decision) == render_console(listed, decision)
    assert render_markdown(stored, decision) == render_markdown(listed, decision)
    with_threshold = GateOptions(threshold=0.3)
    assert decide(stored, with_threshold).reasons == decide(listed, with_threshold).reasons


def test_rows_sharing_a_key_are_merged_as_attempts_in_key_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stored_results, "SORT_CHUNK", 3)
    rows = sample_results(FAKE_REPO)
    # AgentV writes one row per attempt: the same test x target three times, interleaved with others
    attempts = [msgspec.structs.replace(rows[0], score=s, attempt=n) for n, s in enumerate((1.0, 0.0, 0.5))]
    mixed = [attempts[0], *rows[1:3], attempts[1], *rows[3:], attempts[2]]
    stored = _store(mixed, tmp_path / "index.jsonl", unique_keys=False)
    key = lambda r: (r.suite, r.test_id, r.target)  # noqa: E731
    written = read_results(tmp_path / "index.jsonl")
    assert list(stored.aggregated_in_key_order()) == sorted(aggregate_attempts(written), key=key)
    merged = next(r for r in stored.aggregated() if r.test_id == rows[0].test_id)
    assert [t.score for t in merged.trials] == [1.0, 0.0, 0.5]
    summary = RunSummary(results=stored)
    assert render_junit(summary, FAKE_REPO) == render_junit(RunSummary(results=mixed), FAKE_REPO)


def test_a_file_from_elsewhere_keeps_every_check_and_an_own_file_reads_foreign_shapes(tmp_path: Path) -> None:
    """`own=True` only skips the checks that guard hostile files on rows of our own shape: an AgentV
    row resumed into a run still goes through the full reader; a file not marked as the run's own
    still refuses a number out of range at file:line."""
    index = tmp_path / "index.jsonl"
    agentv = b'{"testId": "a", "target": "t", "score": 0.5, "executionStatus": "ok", "suite": "s"}\n'
    index.write_bytes(agentv)
    (row,) = list(StoredResults(index, ResultsTally(), count=1, unique_keys=True, own=True))
    assert (row.test_id, row.score, row.verdict) == ("a", 0.5, "pass")
    bad = b'{"test_id":"b","suite":"s","target":"t","score":7.0,"execution_status":"ok"}\n'
    index.write_bytes(agentv + bad)
    foreign = StoredResults(index, ResultsTally(), count=2, unique_keys=True)
    with pytest.raises(LoadError) as caught:
        list(foreign)
    assert "score 7" in caught.value.render() and f"{index}:2:" in caught.value.render()
