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
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from agentv_ci.model.result import TestResult
from agentv_ci.results.totals import outcome_of

__all__ = ["MAX_ORIGINS", "RECORD_TAIL", "WrittenRows"]

MAX_ORIGINS = 10_000  # (suite, eval path) pairs kept; past that the rows are read for them
_FLUSH_BYTES = 1 << 20
_BLOCK_BYTES = 1 << 20  # records read back at a time

# A row's sort record: suite, test id and target, each ended by a NUL, then the row's byte offset
# and length as 16 and 8 hex digits, in UTF-8. UTF-8 orders as code points do and NUL is below
# every other character, so the records of keys without a NUL sort as (suite, test id, target,
# offset) tuples do; without a newline in a key, a block of records splits at its newlines.
RECORD_TAIL = 24
_LONGEST_ROW = 0xFFFF_FFFF  # the most 8 hex digits say


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
        try:
            record = f"{suite}\0{result.test_id}\0{result.target}\0{offset:016x}{line_bytes:08x}\n".encode()
        except UnicodeEncodeError:  # a lone surrogate: not a row our writer kept as it is
            self.lost()
            return
        if record.count(0) != 3 or record.count(10) != 1 or line_bytes > _LONGEST_ROW:
            self.sortable = False  # the reports read the keys from the rows
            self._buffer.clear()
            if self._keys is not None:
                self._keys.close()
                self._keys = None
            return
        buffer = self._buffer
        buffer += record
        if len(buffer) > _FLUSH_BYTES:
            try:
                self._spool().write(buffer)
            except OSError:  # no room for the keys: the run goes on, the reports read the rows
                self.lost()
                return
            buffer.clear()

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
                yield bytes(self._buffer)
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
                    yield block[:cut]
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
