"""A run's results where the run wrote them: `index.jsonl`, read back as they are iterated.

`RunSummary.results` of a run is a `StoredResults`: a sequence whose rows are decoded from the file
on each pass (a few microseconds a row), so a run holds no result in memory, however many it has. It
carries the run's `ResultsTally` (fed as each row was written), so the gates, `summary.json`, the
console and the Markdown summary read no row at all.

Reports that need the rows in a fixed order (JUnit: by suite, test id and target) get them through
`aggregated_in_key_order`, which sorts the keys in bounded chunks spilled to a temporary directory and
merges them (memory: `SORT_CHUNK` keys, whatever the number of rows), then reads the rows that lie
one after the other in the file with one read; the keys of a run's own rows are the sort records its
writer kept (`WrittenRows`), which sort as bytes. JUnit's `passed_or_aggregated_in_key_order` leaves
the grader results of a run's own passing rows undecoded.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import IO, overload

import msgspec

from agentv_ci.model.result import TestResult
from agentv_ci.results.key_sort import sorted_records, spilled_sort
from agentv_ci.results.passed_rows import PassedRow, decode_passed_row
from agentv_ci.results.results_file import aggregate_attempts, decode_own_row, decode_row, merge_attempts
from agentv_ci.results.tally import ResultsTally
from agentv_ci.results.totals import outcome_of
from agentv_ci.results.written_rows import WrittenRows, record_key, record_places

__all__ = [
    "SORT_CHUNK",
    "StoredResults",
    "aggregated",
    "aggregated_failing",
    "aggregated_in_key_order",
    "passed_or_aggregated_in_key_order",
    "result_keys",
]

SORT_CHUNK = 50_000  # keys sorted in memory at a time (about 8 MB)
_RUN_BYTES = 1 << 16  # rows next to each other in the file read at once, up to about this much

OnKey = Callable[[tuple[str, str, str]], None]
# Whether `on_key` may need the keys in these bytes (sort records: `WrittenRows`); False skips them.
KeyFilter = Callable[[bytes], bool]
# Rows' places, a batch: what tells each one's test x target from another's (equal for the rows of
# one), their offsets and lengths
_Places = tuple[Sequence[object], list[int], list[int]]
_PLACES_AT_ONCE = 512  # rows located at a time: the JUnit report holds a batch of rows at once


class _Key(msgspec.Struct):
    suite: str
    test_id: str
    target: str


_KEY = msgspec.json.Decoder(_Key)


class _Outcome(msgspec.Struct):
    execution_status: str
    verdict: str = "fail"


_OUTCOME = msgspec.json.Decoder(_Outcome)
_IMPLIED = {"ok": "pass", "not_run": "skip"}  # as the row reader implies a verdict our writer omitted
_SPILLED = msgspec.json.Decoder(tuple[str, str, str, int, int])


class StoredResults(Sequence[TestResult]):
    """The rows of `index` (written by this process's `ResultsWriter`), in file order.

    `count` is the number of rows; `tally` their figures (threshold None). `unique_keys`: no two rows
    share a suite, test id and target (no attempts to merge: `aggregated` is the rows themselves).
    `own`: every row is one this run wrote or strictly read before appending (`decode_own_row`); a
    file from elsewhere (`report`, a merge) keeps every check of `decode_row`. `written`: what the
    writer saw of the rows (used only while it describes every row of the file, else they are read).
    """

    def __init__(
        self,
        index: Path,
        tally: ResultsTally,
        *,
        count: int,
        unique_keys: bool,
        own: bool = False,
        written: WrittenRows | None = None,
    ) -> None:
        self.path = index
        self._written = written
        self._decode = decode_own_row if own else decode_row
        self._length = count
        self.unique_keys = unique_keys
        self._tallies: dict[float | None, ResultsTally] = {tally.threshold: tally}
        self._offsets: array[int] | None = None

    def __len__(self) -> int:
        return self._length

    def _seen(self) -> WrittenRows | None:
        """The writer's facts, when they describe every row of the file now."""
        written = self._written
        if written is not None and written.rows == self._length and written.describes(self.path):
            return written
        return None

    def origins(self) -> list[tuple[str, str | None]] | None:
        """(suite, eval path) pairs of the rows, each once, as the writer saw them; None when unknown
        (then read the rows)."""
        seen = self._seen()
        return seen.origins() if seen is not None else None

    def __iter__(self) -> Iterator[TestResult]:
        file = str(self.path)
        with self.path.open("rb") as handle:
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    yield self._decode(line, file, number)

    @overload
    def __getitem__(self, index: int) -> TestResult: ...

    @overload
    def __getitem__(self, index: slice) -> list[TestResult]: ...

    def __getitem__(self, index: int | slice) -> TestResult | list[TestResult]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._length))]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError("result index out of range")
        offsets = self._row_offsets()
        with self.path.open("rb") as handle:
            handle.seek(offsets[index])
            return self._decode(handle.readline(), str(self.path))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=False))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"StoredResults({str(self.path)!r}, rows={self._length})"

    def _row_offsets(self) -> array[int]:
        """Byte offsets of the rows (built on the first indexed access: 8 bytes a row)."""
        if self._offsets is None:
            offsets: array[int] = array("Q")
            position = 0
            with self.path.open("rb") as handle:
                for line in handle:
                    if line.strip():
                        offsets.append(position)
                    position += len(line)
            self._offsets = offsets
        return self._offsets

    # ------------------------------------------------------------------ figures and orders
    def tally(self, threshold: float | None = None) -> ResultsTally:
        """The figures of the rows (the run's own; another `threshold` costs one pass)."""
        tally = self._tallies.get(threshold)
        if tally is None:
            tally = self._tallies[threshold] = ResultsTally(threshold).add_all(self)
        return tally

    def keys(self) -> Iterator[tuple[str, str, str]]:
        """(suite, test id, target) of every row, in file order (without decoding the rows)."""
        with self.path.open("rb") as handle:
            for line in handle:
                if line.strip():
                    yield _key_of(line, self.path)

    def aggregated(self) -> Iterator[TestResult]:
        """One result per test x target (attempt rows merged)."""
        if self.unique_keys:
            return iter(self)
        return self.aggregated_in_key_order()

    def aggregated_failing(self) -> Iterator[TestResult]:
        """The results of `aggregated` that failed or errored (the rows of a passing or skipped test
        are not decoded: most rows of a run)."""
        if not self.unique_keys:
            yield from (r for r in self.aggregated_in_key_order() if outcome_of(r) in _FAILING)
            return
        facts = self._seen()
        if facts is not None and not facts.failing:  # no row the writer saw failed or errored
            return
        file = str(self.path)
        with self.path.open("rb") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    seen = _OUTCOME.decode(line)
                except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
                    seen = None
                if seen is not None and not _may_fail(seen):
                    continue
                row = self._decode(line, file, number)
                if outcome_of(row) in _FAILING:
                    yield row

    def aggregated_in_key_order(
        self, on_key: OnKey | None = None, key_filter: KeyFilter | None = None
    ) -> Iterator[TestResult]:
        """One result per test x target, ordered by suite, test id and target; rows of the same test
        x target are merged in the order they were written (as `aggregate_attempts` merges them).
        `on_key` sees every row's key, all of them before the first result is yielded; with
        `key_filter`, it may skip the keys of sort records for which `key_filter` says False (their
        bytes, one record or many: `written_rows`; a filter looks for what no digit, comma, bracket,
        NUL nor newline is)."""
        file = str(self.path)
        decode = self._decode
        for lines in self._rows_in_key_order(on_key, key_filter):
            yield merge_attempts([decode(line, file) for line in lines])

    def passed_or_aggregated_in_key_order(
        self, on_key: OnKey | None = None, key_filter: KeyFilter | None = None
    ) -> Iterator[TestResult | PassedRow]:
        """`aggregated_in_key_order`, but a passing single-attempt row of the run's own writing
        (`WrittenRows` describes the file) comes as a `PassedRow`, its grader results not decoded."""
        light = self._decode is decode_own_row and self._seen() is not None
        file = str(self.path)
        decode = self._decode
        for lines in self._rows_in_key_order(on_key, key_filter):
            if light and len(lines) == 1:
                passed = decode_passed_row(lines[0])
                if passed is not None:
                    yield passed
                    continue
            yield merge_attempts([decode(line, file) for line in lines])

    def _rows_in_key_order(self, on_key: OnKey | None, key_filter: KeyFilter | None) -> Iterator[list[bytes]]:
        """The rows of each test x target, in key order (`_located_in_key_order`), as their bytes."""
        # Rows are grouped by key even when the run's keys were unique as written: masking a secret
        # in two test ids can make them one key in the file, and JUnit must then show one case.
        with self.path.open("rb") as handle:
            batches = _read_batches(handle, self._located_in_key_order(on_key, key_filter))
            group: list[bytes] = []
            current: object = None
            for keys, lines in batches:
                for key, line in zip(keys, lines, strict=True):
                    if key != current and group:
                        yield group
                        group = []
                    current = key
                    group.append(line)
            if group:
                yield group

    def _located_in_key_order(
        self, on_key: OnKey | None = None, key_filter: KeyFilter | None = None
    ) -> Iterator[_Places]:
        """Where every row is, sorted by key (equal keys in file order: the offset breaks ties), in
        batches. Chunks of `SORT_CHUNK` keys are sorted and spilled, then merged."""
        facts = self._seen()
        if facts is not None and facts.sortable:  # the writer's sort records: no row is read for its key
            records = _record_lists(facts.record_blocks(), on_key, key_filter)
            yield from record_places(sorted_records(records, chunk=SORT_CHUNK, prefix="agentv-ci-sort-"))
            return
        keys = spilled_sort(self._keys(on_key), _SPILLED, chunk=SORT_CHUNK, prefix="agentv-ci-sort-")
        while batch := list(islice(keys, _PLACES_AT_ONCE)):
            located = [(key[:3], key[3], key[4]) for key in batch]
            yield [key for key, _, _ in located], [o for _, o, _ in located], [n for _, _, n in located]

    def _keys(self, on_key: OnKey | None) -> Iterator[tuple[str, str, str, int, int]]:
        """(suite, test id, target, offset, length) of every row, in file order, read from the file."""
        position = 0
        with self.path.open("rb") as handle:
            for line in handle:
                if line.strip():
                    key = _key_of(line, self.path)
                    if on_key is not None:
                        on_key(key)
                    yield (*key, position, len(line))
                position += len(line)


def _record_lists(
    blocks: Iterable[bytes], on_key: OnKey | None, key_filter: KeyFilter | None
) -> Iterator[list[bytes]]:
    """The sort records of each block (`WrittenRows.record_blocks`), each key shown to `on_key` first
    (only those `key_filter` may need, when given: a block it needs none of is not looked into)."""
    for block in blocks:
        records = block.split(b"\n")
        records.pop()  # after the last newline
        if on_key is not None and (key_filter is None or key_filter(block)):
            for record in records:
                if key_filter is None or key_filter(record):
                    on_key(record_key(record))
        yield records


def _read_batches(
    handle: IO[bytes], batches: Iterable[_Places]
) -> Iterator[tuple[Sequence[object], list[bytes]]]:
    """Each batch's keys and its rows' bytes: rows that lie one after the other in the file (a
    suite's ids 1000 to 1009 do) are read at once."""
    for keys, offsets, lengths in batches:
        lines: list[bytes] = []
        first = 0
        start = end = offsets[0] if offsets else 0
        for index in range(len(offsets)):
            offset = offsets[index]
            if offset != end or end - start > _RUN_BYTES:
                lines += _read_run(handle, offsets[first:index], lengths[first:index], start, end)
                first, start = index, offset
            end = offset + lengths[index]
        if offsets:
            lines += _read_run(handle, offsets[first:], lengths[first:], start, end)
        yield keys, lines


def _read_run(handle: IO[bytes], offsets: list[int], lengths: list[int], start: int, end: int) -> list[bytes]:
    """The bytes of the rows at `offsets`, which lie one after the other from `start` to `end`."""
    # the rows' bytes alone (a seek and readline would refill the whole read buffer)
    data = os.pread(handle.fileno(), end - start, start)
    if len(data) == end - start:
        return [
            data[offset - start : offset - start + length]
            for offset, length in zip(offsets, lengths, strict=True)
        ]
    return [_row_at(handle, offset, length) for offset, length in zip(offsets, lengths, strict=True)]


def _row_at(handle: IO[bytes], offset: int, length: int) -> bytes:
    line = os.pread(handle.fileno(), length, offset)
    if len(line) != length:  # cut short: the reader says where
        handle.seek(offset)
        line = handle.readline()
    return line


def _key_of(line: bytes, path: Path) -> tuple[str, str, str]:
    try:
        key = _KEY.decode(line)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):  # decode_row says where
        key = None
    if key is None or not key.suite:  # not our row's shape (a resumed AgentV row): the full reader
        row = decode_row(line, str(path))
        return row.suite, row.test_id, row.target
    return key.suite, key.test_id, key.target


def aggregated(results: Iterable[TestResult]) -> Iterable[TestResult]:
    """One result per test x target of `results` (`aggregate_attempts`, without holding the rows of
    a run's `StoredResults`)."""
    if isinstance(results, StoredResults):
        return results.aggregated()
    return aggregate_attempts(results)


def result_keys(results: Iterable[TestResult]) -> Iterator[tuple[str, str, str]]:
    """(suite, test id, target) of each result (of a run's rows, without decoding them)."""
    if isinstance(results, StoredResults):
        return results.keys()
    return ((r.suite, r.test_id, r.target) for r in results)


def aggregated_in_key_order(
    results: Iterable[TestResult], on_key: OnKey | None = None, key_filter: KeyFilter | None = None
) -> Iterator[TestResult]:
    """`aggregated(results)` sorted by suite, test id and target; `on_key` sees the key of every row
    before the first result is yielded (but those `key_filter` may skip:
    `StoredResults.aggregated_in_key_order`)."""
    if isinstance(results, StoredResults):
        return results.aggregated_in_key_order(on_key, key_filter)
    if on_key is not None:
        for result in results:
            on_key((result.suite, result.test_id, result.target))
    merged = aggregate_attempts(results)
    return iter(sorted(merged, key=lambda r: (r.suite, r.test_id, r.target)))


def passed_or_aggregated_in_key_order(
    results: Iterable[TestResult], on_key: OnKey | None = None, key_filter: KeyFilter | None = None
) -> Iterator[TestResult | PassedRow]:
    """`aggregated_in_key_order`, with a run's own passing single-attempt rows as `PassedRow`s
    (`StoredResults.passed_or_aggregated_in_key_order`)."""
    if isinstance(results, StoredResults):
        return results.passed_or_aggregated_in_key_order(on_key, key_filter)
    return aggregated_in_key_order(results, on_key)


def aggregated_failing(results: Iterable[TestResult]) -> Iterable[TestResult]:
    """The aggregated results that failed or errored (a run's rows that passed are not decoded)."""
    if isinstance(results, StoredResults):
        return results.aggregated_failing()
    return [r for r in aggregate_attempts(results) if outcome_of(r) in _FAILING]


_FAILING = ("failed", "error")


def _may_fail(seen: _Outcome) -> bool:
    """Whether a row with this status and verdict can be failed or errored (`outcome_of`)."""
    status, verdict = seen.execution_status, seen.verdict
    if verdict == "fail":
        verdict = _IMPLIED.get(status, verdict)
    if status == "not_run" or verdict == "skip":
        return False
    return status == "execution_error" or verdict != "pass"
