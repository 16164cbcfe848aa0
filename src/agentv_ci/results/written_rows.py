"""What a `ResultsWriter` saw of the rows it wrote, kept small, so the reports need not read every row
back for it: each row's key and byte offset as a sort record (spooled to an anonymous temporary file,
for the JUnit report's key order), the (suite, eval path) pairs the rows came from (for the sidecar
baselines) and how many rows may be failing or errored (SARIF and Code Quality skip a file that has
none).

These facts stand for a file only when every byte of it is a row they saw (`describes`): a file that
held rows before the writer opened it (a resumed run's), a row whose text had to be scrubbed, or a row
in a shape the fast readers take the full reader for, makes them unusable, and the reports read the
file as before.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import IO

import msgspec

from agentv_ci.model.result import TestResult
from agentv_ci.results.totals import outcome_of

__all__ = ["MAX_ORIGINS", "WrittenRows", "record_key", "record_places"]

_ENCODER = msgspec.json.Encoder()

MAX_ORIGINS = 10_000  # (suite, eval path) pairs kept; past that the rows are read for them
_FLUSH_BYTES = 1 << 20
_BLOCK_BYTES = 1 << 20  # records read back at a time

# A row's sort record is its key line as the writer spooled it, the JSON array (suite, test id,
# target, offset + _OFFSET_BASE, length + _LENGTH_BASE), with each `"` made a NUL:
# `[\0suite\0,\0test id\0,\0target\0,<16 digits>,<10 digits>]`. In a line without a backslash
# (no escape: each string is its UTF-8 bytes) every `"` is one of the array's; a line with one is
# decoded and laid out so. UTF-8 orders as code points do and NUL is below every other byte, so the
# records of keys without a NUL sort as (suite, test id, target, offset) tuples do; without a
# newline in a key, a block of records splits at its newlines.
_OFFSET_BASE = 10**15  # offsets print as 16 digits (a file would need petabytes for more)
_LENGTH_BASE = 10**9  # lengths print as 10 digits, up to the longest row
_LONGEST_ROW = 8 * 10**9
RECORD_TAIL = len(",0000000000000000,0000000000]")
_QUOTE_TO_NUL = bytes.maketrans(b'"', b"\0")
_KEY_LINE = msgspec.json.Decoder(tuple[str, str, str, int, int])
_NUMBERS = msgspec.json.Decoder(list[int])
_PLACES_AT_ONCE = 512  # rows located at a time: the JUnit report holds a batch of rows at once


def record_places(records: Iterable[bytes]) -> Iterator[tuple[list[bytes], list[int], list[int]]]:
    """(key parts, row offsets, row lengths) of the sort records, a batch of them at a time (their
    numbers parsed by one decode a batch)."""
    remaining = iter(records)
    while batch := list(islice(remaining, _PLACES_AT_ONCE)):
        numbers = _NUMBERS.decode(b"[" + b",".join([record[-28:-1] for record in batch]) + b"]")
        offsets = [number - _OFFSET_BASE for number in numbers[::2]]
        lengths = [number - _LENGTH_BASE for number in numbers[1::2]]
        yield [record[:-RECORD_TAIL] for record in batch], offsets, lengths


def record_key(record: bytes) -> tuple[str, str, str]:
    """(suite, test id, target) of a sort record (or of its key part)."""
    parts = record.split(b"\0")
    return parts[1].decode(), parts[3].decode(), parts[5].decode()


def _unrecordable(*parts: str) -> bool:
    return any("\0" in part or "\n" in part for part in parts)


def _records(block: bytes) -> bytes:
    """A block of key lines (whole lines) as sort records."""
    if b"\\" not in block:  # no escape: the common block, one pass in C
        return block.translate(_QUOTE_TO_NUL)
    return b"".join(_record(line) for line in block.split(b"\n")[:-1])


def _record(line: bytes) -> bytes:
    if b"\\" not in line:
        return line.translate(_QUOTE_TO_NUL) + b"\n"
    suite, test_id, target, offset, length = _KEY_LINE.decode(line)
    key = "\0,\0".join((suite, test_id, target)).encode()
    return b"[\0" + key + f"\0,{offset},{length}]\n".encode()


class WrittenRows:
    """The facts of the rows written to one file, fed by its `ResultsWriter` (`add`, `lost`).

    `complete`: every row written so far was seen; `end`: the file's size after them; `sortable`:
    every row's key made a sort record (none holds a NUL or a newline). `close()` drops the record
    spool (an anonymous file: nothing is left behind, even by a kill) and the facts."""

    def __init__(self) -> None:
        self.complete = True
        self.end = 0
        self.rows = 0
        self.failing = 0  # rows whose outcome is failed or errored
        self.sortable = True
        self._origins: dict[tuple[str, str | None], None] | None = {}
        self._last_suite: str | None = None  # the last origin added
        self._last_path: str | None = None
        self._keys: IO[bytes] | None = None
        self._buffer = bytearray()

    def opened_at(self, size: int) -> None:
        """The writer opened the file with `size` bytes in it: rows not seen, unless they are ours."""
        if size != self.end:
            self.lost()

    def add(self, result: TestResult, line_bytes: int) -> None:
        """`result` was written as it is, in one line of `line_bytes` bytes at the end of the file."""
        if not self.complete:
            return
        offset = self.end
        self.end += line_bytes
        self.rows += 1
        suite = result.suite
        if not suite:  # read back by the full reader, which may name it otherwise
            self.lost()
            return
        # A passing row (most) is told by its verdict alone; the others as `outcome_of` tells them.
        if (result.verdict != "pass" or result.execution_status == "execution_error") and outcome_of(
            result
        ) in ("failed", "error"):
            self.failing += 1
        eval_path = result.eval_path
        origins = self._origins
        # A suite's rows come in runs with the same strings: the same objects are not looked up again.
        if origins is not None and (suite is not self._last_suite or eval_path is not self._last_path):
            self._last_suite, self._last_path = suite, eval_path
            origins[(suite, eval_path)] = None
            if len(origins) > MAX_ORIGINS:
                self._origins = None
        if not self.sortable:
            return
        buffer = self._buffer
        start = len(buffer)
        test_id, target = result.test_id, result.target
        _ENCODER.encode_into(
            (suite, test_id, target, offset + _OFFSET_BASE, line_bytes + _LENGTH_BASE), buffer, -1
        )
        # an escape in the line: it may stand for a NUL or a newline, which no record can hold
        if (
            buffer.find(b"\\", start) >= 0 and _unrecordable(suite, test_id, target)
        ) or line_bytes >= _LONGEST_ROW:
            self._unsortable()
            return
        buffer += b"\n"
        if len(buffer) > _FLUSH_BYTES:
            try:
                self._spool().write(buffer)
            except OSError:  # no room for the keys: the run goes on, the reports read the rows
                self.lost()
                return
            buffer.clear()

    def _unsortable(self) -> None:
        """A key no sort record can hold: the reports read the keys from the rows."""
        self.sortable = False
        self._buffer.clear()
        if self._keys is not None:
            self._keys.close()
            self._keys = None

    def lost(self) -> None:
        """A row was written that these facts do not describe: they stand for nothing any more."""
        self.close()

    def describes(self, path: Path) -> bool:
        """Whether every row of `path` is one these facts saw (the file has grown by nothing else)."""
        if not self.complete:
            return False
        try:
            if self._keys is not None and self._buffer:  # every key where `row_keys` reads them
                self._keys.write(self._buffer)
                self._keys.flush()
                self._buffer.clear()
            return path.stat().st_size == self.end
        except OSError:  # no room for the keys (or no file): the rows are read
            self.lost()
            return False

    def origins(self) -> list[tuple[str, str | None]] | None:
        """(suite, eval path) of the rows, each pair once, in the order first written; None when too
        many to keep."""
        return list(self._origins) if self._origins is not None else None

    def record_blocks(self) -> Iterator[bytes]:
        """The rows' sort records, in file order, in blocks of whole records (each ends with b"\\n")."""
        if not self.complete or not self.sortable:
            raise RuntimeError("the written rows' sort records were not all kept")
        if self._keys is None:
            if self._buffer:
                yield _records(bytes(self._buffer))
            return
        keys = self._keys
        if self._buffer:  # written by `describes` first
            raise RuntimeError("the written rows' keys were read before `describes` settled them")
        keys.seek(0)
        try:
            rest = b""
            while block := keys.read(_BLOCK_BYTES):
                block = rest + block
                cut = block.rfind(b"\n") + 1
                rest = block[cut:]
                if cut:
                    yield _records(block[:cut])
        finally:
            keys.seek(0, 2)  # later rows append after the last record

    def close(self) -> None:
        """Drop what was kept: the facts stand for nothing any more."""
        self.complete = False
        self._origins = None
        self._buffer.clear()
        if self._keys is not None:
            self._keys.close()
            self._keys = None

    def _spool(self) -> IO[bytes]:
        if self._keys is None:
            self._keys = tempfile.TemporaryFile(prefix="agentv-ci-keys-")  # noqa: SIM115 (closed by close())
        return self._keys
