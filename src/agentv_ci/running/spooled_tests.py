"""The built tests of a JSONL dataset, kept for the run in a temporary file as they are first read.

A run reads each dataset once: the first reading builds and checks every test (and writes the plan);
each test goes here, encoded (msgpack, in frames of `_FRAME_TESTS`), so the run takes it back without
reading, parsing and building it again, and nothing of the dataset is held in memory. The file is
the run's own (unlinked at once), so a dataset edited while the run goes changes nothing it runs.
"""

from __future__ import annotations

import os
import struct
import tempfile
from collections.abc import Iterator

import msgspec

from agentv_ci.model.suite import Test

__all__ = ["SpooledTests"]

_FRAME_TESTS = 256  # tests per frame: one write and two reads per frame, a few hundred KiB at most
_HEADER = struct.Struct("<I")  # a frame's length in bytes
_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(list[Test])


class SpooledTests:
    """Tests appended in order (`add`), then read back in that order as often as wanted (`__iter__`)."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close(), or with the process)
        self._fd = self._file.fileno()
        self._pending: list[Test] = []
        self._size = 0  # bytes written
        self.count = 0

    def add(self, test: Test) -> None:
        self._pending.append(test)
        self.count += 1
        if len(self._pending) >= _FRAME_TESTS:
            self._write_frame()

    def _write_frame(self) -> None:
        payload = _ENCODER.encode(self._pending)
        self._pending = []
        frame = _HEADER.pack(len(payload)) + payload
        os.pwrite(self._fd, frame, self._size)
        self._size += len(frame)

    def __iter__(self) -> Iterator[Test]:
        if self._pending:
            self._write_frame()
        offset, end = 0, self._size  # tests added while reading are not read (none are)
        while offset < end:
            (length,) = _HEADER.unpack(os.pread(self._fd, _HEADER.size, offset))
            payload = os.pread(self._fd, length, offset + _HEADER.size)
            if len(payload) != length:  # our own file, cut short: never run fewer tests silently
                raise OSError(f"spooled tests: frame at {offset} is {len(payload)} of {length} bytes")
            offset += _HEADER.size + length
            yield from _DECODER.decode(payload)

    def close(self) -> None:
        self._pending = []
        self._file.close()
