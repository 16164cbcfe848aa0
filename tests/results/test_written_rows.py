"""What the writer saw of a run's rows (results/written_rows.py): the reports that use it write the
same bytes as from rows read back, and the facts are dropped whenever they might not describe every
row of the file (rows there before the writer, a row whose text was scrubbed, another writer)."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import msgspec
import pytest

from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.reporting.codequality import render_codequality
from agentv_ci.reporting.junit import render_junit
from agentv_ci.reporting.sarif import render_sarif
from agentv_ci.results import stored_results, written_rows
from agentv_ci.results.results_file import ResultsWriter, load_run, read_results
from agentv_ci.results.sidecars import eval_files_of
from agentv_ci.results.stored_results import StoredResults
from agentv_ci.results.streamed_run import load_run_streamed
from agentv_ci.results.tally import ResultsTally
from agentv_ci.results.written_rows import WrittenRows, record_places
from agentv_ci.running.session import RunRequest, execute_run
from tests.reporting.golden import FAKE_REPO
from tests.reporting.sample_runs import encodable, sample_results


def _many(rows: list[TestResult]) -> list[TestResult]:
    out = [msgspec.structs.replace(row, test_id=f"{row.test_id}-{n:03d}") for n in range(30) for row in rows]
    return out[2::3] + out[::3][::-1] + out[1::3]  # scrambled: the key order is the sort's work


def _store(rows: list[TestResult], path: Path, written: WrittenRows | None) -> StoredResults:
    tally = ResultsTally()
    with ResultsWriter(path, written) as writer:
        for row in rows:
            tally.add(writer.append(row))
    return StoredResults(path, tally, count=len(rows), unique_keys=True, own=True, written=written)


def _passing(rows: list[TestResult]) -> list[TestResult]:
    return [msgspec.structs.replace(r, verdict="pass", execution_status="ok", error=None) for r in rows]


@pytest.mark.parametrize("chunk", [7, 50_000])
@pytest.mark.parametrize("passing", [False, True])
def test_reports_from_the_writers_facts_equal_reports_from_the_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int, passing: bool
) -> None:
    monkeypatch.setattr(stored_results, "SORT_CHUNK", chunk)
    rows = _many(encodable(sample_results(FAKE_REPO)))
    if passing:
        rows = _passing(rows)
    seen = WrittenRows()
    facts = _store(rows, tmp_path / "seen" / "index.jsonl", seen)
    read = _store(rows, tmp_path / "read" / "index.jsonl", None)
    assert seen.complete and seen.rows == len(rows)
    assert (seen.failing == 0) is passing
    origins = facts.origins()
    assert origins is not None and read.origins() is None  # the facts are used, not the file
    assert origins == list(dict.fromkeys((r.suite, r.eval_path) for r in rows))
    assert eval_files_of(facts, FAKE_REPO) == eval_files_of(read, FAKE_REPO)
    assert _places(facts)[1:] == _places(read)[1:]
    assert list(facts.aggregated_failing()) == list(read.aggregated_failing())
    for render in (render_junit, render_sarif, render_codequality):
        assert render(RunSummary(results=facts), FAKE_REPO) == render(RunSummary(results=read), FAKE_REPO)


def test_rows_in_the_file_before_the_writer_opened_it_drop_the_facts(tmp_path: Path) -> None:
    """A resumed run appends to rows it did not write: the reports read them all."""
    rows = encodable(sample_results(FAKE_REPO))
    index = tmp_path / "index.jsonl"
    _store(rows[:2], index, None)
    seen = WrittenRows()
    with ResultsWriter(index, seen) as writer:
        writer.append(rows[2])
    assert not seen.complete
    stored = StoredResults(index, ResultsTally(), count=3, unique_keys=True, written=seen)
    assert stored.origins() is None
    assert [key[1] for key in _places(stored)[0]] == sorted(r.test_id for r in rows[:3])  # type: ignore[index]


def test_facts_of_two_writing_blocks_hold_and_another_writers_row_drops_them(tmp_path: Path) -> None:
    """A run writes its rows, then the not-run rows, through two writers sharing the facts (the
    second starts where the first ended); a row appended by anyone else makes them stand for nothing."""
    rows = encodable(sample_results(FAKE_REPO))
    index = tmp_path / "index.jsonl"
    seen = WrittenRows()
    _store(rows[:2], index, seen)
    with ResultsWriter(index, seen) as writer:
        writer.append(rows[2])
    stored = StoredResults(index, ResultsTally(), count=3, unique_keys=True, written=seen)
    assert seen.complete and stored.origins() is not None
    records = [record for block in seen.record_blocks() for record in block.split(b"\n")[:-1]]
    offsets = [offset for _, batch, _ in record_places(records) for offset in batch]
    assert offsets == [0, *(len(x) for x in _line_ends(index))][:3]
    with ResultsWriter(index) as writer:
        writer.append(rows[3])
    assert StoredResults(index, ResultsTally(), count=4, unique_keys=True, written=seen).origins() is None
    assert StoredResults(index, ResultsTally(), count=3, unique_keys=True, written=seen).origins() is None


def _places(stored: StoredResults) -> tuple[list[object], list[int], list[int]]:
    """The keys, offsets and lengths of the rows in key order, as the JUnit report reads them."""
    keys: list[object] = []
    offsets: list[int] = []
    lengths: list[int] = []
    for batch_keys, batch_offsets, batch_lengths in stored._located_in_key_order():
        keys += batch_keys
        offsets += batch_offsets
        lengths += batch_lengths
    return keys, offsets, lengths


def _line_ends(index: Path) -> list[bytes]:
    """The file's bytes up to the end of each line (so `len` of each is the next line's offset)."""
    data = index.read_bytes()
    return [data[: i + 1] for i, byte in enumerate(data) if byte == ord("\n")]


def test_a_scrubbed_row_or_a_row_without_a_suite_drops_the_facts(tmp_path: Path) -> None:
    """The line of a scrubbed row says what the row in memory does not (its key could differ), and a
    row without a suite is named by the full reader: neither can be described by what was seen."""
    row = encodable(sample_results(FAKE_REPO))[0]
    for n, odd in enumerate(
        (msgspec.structs.replace(row, test_id="bad \udc80"), msgspec.structs.replace(row, suite=""))
    ):
        seen = WrittenRows()
        _store([row, odd], tmp_path / f"{n}.jsonl", seen)
        assert not seen.complete
        with pytest.raises(RuntimeError):
            list(seen.record_blocks())


def test_a_failing_row_keeps_the_failing_scan(tmp_path: Path) -> None:
    rows = _passing(encodable(sample_results(FAKE_REPO)))
    failing = msgspec.structs.replace(rows[1], verdict="fail", execution_status="quality_failure", score=0.1)
    seen = WrittenRows()
    stored = _store([rows[0], failing, *rows[2:]], tmp_path / "index.jsonl", seen)
    assert seen.failing == 1
    assert [r.test_id for r in stored.aggregated_failing()] == [failing.test_id]


def test_attempt_rows_sort_from_the_facts_as_from_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows repeating a test x target are merged in the order they were written: the offsets kept
    with the keys break the ties as the file's positions do."""
    monkeypatch.setattr(stored_results, "SORT_CHUNK", 3)
    rows = encodable(sample_results(FAKE_REPO))
    attempts = [msgspec.structs.replace(rows[0], score=s, attempt=n) for n, s in enumerate((1.0, 0.0, 0.5))]
    mixed = [attempts[0], *rows[1:3], attempts[1], *rows[3:], attempts[2]]
    tally = ResultsTally()
    seen = WrittenRows()
    index = tmp_path / "index.jsonl"
    with ResultsWriter(index, seen) as writer:
        for row in mixed:
            tally.add(writer.append(row))
    facts = StoredResults(index, tally, count=len(mixed), unique_keys=False, own=True, written=seen)
    read = StoredResults(index, tally, count=len(mixed), unique_keys=False, own=True)
    assert facts.origins() is not None
    assert list(facts.aggregated_in_key_order()) == list(read.aggregated_in_key_order())
    merged = next(r for r in facts.aggregated() if r.test_id == rows[0].test_id)
    assert [t.score for t in merged.trials] == [1.0, 0.0, 0.5]


def _dataset(root: Path) -> Path:
    (root / ".git").mkdir()
    (root / ".agentv").mkdir()
    (root / ".agentv" / "targets.yaml").write_text("targets:\n  - name: default\n    provider: mock\n")
    (root / "cases.yaml").write_text("name: cases\nassertions:\n  - type: contains\n    value: answer\n")
    lines = (json.dumps({"id": f"t{i:04d}", "input": f"question {i}"}) for i in range(40))
    (root / "cases.jsonl").write_text("".join(line + "\n" for line in lines))
    return root / "cases.jsonl"


def test_a_run_hands_its_writers_facts_to_the_reports_and_a_resumed_run_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset = _dataset(tmp_path)
    monkeypatch.chdir(tmp_path)
    request = RunRequest(paths=[dataset], output_dir=tmp_path / "out", dry_run=True, quiet=True)
    results = execute_run(request).summary.results
    assert isinstance(results, StoredResults)
    origins = results.origins()
    assert origins is not None and [suite for suite, _ in origins] == ["cases"]
    assert eval_files_of(results, tmp_path) == {dataset.resolve(): {"cases"}}
    first = render_junit(execute_run(request).summary, tmp_path)
    # resumed: the rows of the run before are in the file, not seen by this run's writer
    resumed = execute_run(dataclasses.replace(request, resume=True)).summary
    assert isinstance(resumed.results, StoredResults) and len(resumed.results) == 40
    assert resumed.results.origins() is None
    assert eval_files_of(resumed.results, tmp_path) == {dataset.resolve(): {"cases"}}
    assert _no_times(render_junit(resumed, tmp_path)) == _no_times(first)


def _no_times(xml: str) -> str:
    return re.sub(r'(time|timestamp)="[^"]*"', "", xml)


def test_a_report_of_a_finished_run_reads_its_spool_through_the_facts(tmp_path: Path) -> None:
    rows = _many(encodable(sample_results(FAKE_REPO)))
    _store(rows, tmp_path / "run" / "index.jsonl", None)
    spool = tmp_path / "spool"
    spool.mkdir()
    streamed = load_run_streamed(tmp_path / "run", spool)
    assert isinstance(streamed.results, StoredResults) and streamed.results.origins() is not None
    whole = load_run(tmp_path / "run")
    assert render_junit(streamed, FAKE_REPO) == render_junit(whole, FAKE_REPO)
    assert render_sarif(streamed, FAKE_REPO) == render_sarif(whole, FAKE_REPO)


class _FullDisk:
    """A temporary file on a full disk: every write fails."""

    def write(self, data: bytes) -> int:
        raise OSError(28, "No space left on device")

    def close(self) -> None:
        pass


@pytest.mark.parametrize("fails_at", ["run", "report"])
def test_no_room_for_the_keys_leaves_the_run_whole_and_the_reports_read_the_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fails_at: str
) -> None:
    """The key spool is a convenience: a full temporary directory while the run writes (or when the
    reports settle the last keys) drops the facts; every row is still written and reported."""
    monkeypatch.setattr(written_rows, "_FLUSH_BYTES", 1 if fails_at == "run" else 10**9)
    rows = _many(encodable(sample_results(FAKE_REPO)))
    seen = WrittenRows()
    if fails_at == "report":
        seen._keys = _FullDisk()  # type: ignore[assignment]  # as if spooled before, now full
    monkeypatch.setattr(WrittenRows, "_spool", lambda self: _FullDisk())
    stored = _store(rows, tmp_path / "index.jsonl", seen)
    read = _store(rows, tmp_path / "read.jsonl", None)
    assert stored.origins() is None and not seen.complete
    assert len(stored) == len(rows) == len(read_results(tmp_path / "index.jsonl"))
    assert render_junit(RunSummary(results=stored), FAKE_REPO) == render_junit(
        RunSummary(results=read), FAKE_REPO
    )


# Keys whose records sort only as code points do (UTF-8, NUL below all): prefixes, characters
# below `"` and escaped ones, the top of the BMP against astral characters, names that clean to
# the same one or hold a ` [`.
_ODD_KEYS = [
    ("s", "a", "t"),
    ("s", "a ", "t"),
    ("s", "a!", "t"),
    ("s", 'a"b', "t"),
    ("s", "a\\b", "t"),
    ("s", "a]", "t,1"),
    ("s", "a\x01", "t"),
    ("s", "a\x1b[0m", "t"),
    ("s", "a\t", "t"),
    ("s", "a\r", "t"),
    ("s", "x [y", "t"),
    ("s", "x", "y [t"),
    ("s", "\uffff", "t"),
    ("s", "\ufffe", "t"),
    ("s", "\U0001f600", "t"),
    ("s", "é", "t"),
    ("s", "e", "t"),
    ("s", "a", "t2"),
    ("s", "a", ""),
    ("sb", "a", "t"),
    ("s b", "a", "t"),
    ("s", "b", "t"),
]


def test_sort_records_order_hostile_keys_as_their_tuples_do(tmp_path: Path) -> None:
    """The writer's sort records (UTF-8 bytes, each part ended by a NUL) put the rows in the order
    the (suite, test id, target) tuples read from the file do, and JUnit writes the same bytes."""
    base = _passing(encodable(sample_results(FAKE_REPO)))[0]
    rows = [msgspec.structs.replace(base, suite=s, test_id=i, target=t) for s, i, t in _ODD_KEYS]
    rows += [msgspec.structs.replace(rows[0], attempt=1, score=0.5)]  # a second attempt: ties by offset
    rows = rows[1::2] + rows[::2]
    seen = WrittenRows()
    facts = _store(rows, tmp_path / "seen" / "index.jsonl", seen)
    read = _store(rows, tmp_path / "read" / "index.jsonl", None)
    assert seen.complete and seen.sortable
    assert _places(facts)[1:] == _places(read)[1:]
    assert _places(read)[0] == sorted((r.suite, r.test_id, r.target) for r in rows)
    assert render_junit(RunSummary(results=facts), FAKE_REPO) == render_junit(
        RunSummary(results=read), FAKE_REPO
    )


@pytest.mark.parametrize("test_id", ["a\nb", "a\x00b"])
def test_a_key_no_record_can_hold_keeps_the_facts_and_sorts_from_the_file(
    tmp_path: Path, test_id: str
) -> None:
    """A NUL or a newline in a key would break its record: the keys are read from the rows, and
    the rest of the writer's facts still stand."""
    rows = _passing(encodable(sample_results(FAKE_REPO)))
    rows.append(msgspec.structs.replace(rows[0], test_id=test_id))
    seen = WrittenRows()
    facts = _store(rows, tmp_path / "seen" / "index.jsonl", seen)
    read = _store(rows, tmp_path / "read" / "index.jsonl", None)
    assert seen.complete and not seen.sortable and facts.origins() is not None
    with pytest.raises(RuntimeError):
        list(seen.record_blocks())
    assert render_junit(RunSummary(results=facts), FAKE_REPO) == render_junit(
        RunSummary(results=read), FAKE_REPO
    )
