"""The built tests of a JSONL dataset, kept for the run in a temporary file as they are first read.

A run reads each dataset once: the first reading builds and checks every test (and writes the plan);
each test goes here, encoded (msgpack, in frames of `_FRAME_TESTS`), so the run takes it back without
reading, parsing and building it again, and nothing of the dataset is held in memory. The file is
the run's own (unlinked at once), so a dataset edited while the run goes changes nothing it runs.

A suite's graders are one spec object shared by every test (built graders and fingerprint parts are
cached by that identity: plugins/building.py, running/fingerprints.py), so specs are spooled by
reference to a table of the ones seen, as long as it has room, and come back as the same objects;
consecutive tests with the same specs, all from the table, share one `graders` list (nothing changes
a built test's graders in place), which the fingerprints' cache recognises at once.

A plain test (loading/plain_tests.py) is spooled as its row alone, in a frame of rows of one template
and file, and built again from that template when it is taken back: a few bytes to write and read
instead of the whole test.
"""

from __future__ import annotations

import operator
import os
import struct
import tempfile
from collections.abc import Iterator

import msgspec

from agentv_ci.loading.plain_tests import PlainRow, PlainTemplate
from agentv_ci.model.source import SourceLocation
from agentv_ci.model.suite import GraderSpec, Test

__all__ = ["SpooledTests"]


class _Spooled(msgspec.Struct, array_like=True):
    """A test as spooled: `graders` holds only the specs not in the table; `order`, when the test
    has graders, gives each in turn: a table index, or -1 for the next of `test.graders`."""

    test: Test
    order: list[int] | None = None


_FRAME_TESTS = 256  # tests per frame: one write and two reads per frame, a few hundred KiB at most
_SHARED_SPECS = 4096  # grader specs spooled by reference at most (then inline): bounded memory
# A frame's length in bytes, and its kind: 0 for whole tests, else 1 + the index of the template and
# file of its rows (`_kinds`).
_HEADER = struct.Struct("<II")
_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(list[_Spooled])
_ROWS = msgspec.msgpack.Decoder(list[PlainRow])


class SpooledTests:
    """Tests appended in order (`add`), then read back in that order as often as wanted (`__iter__`)."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close(), or with the process)
        self._fd = self._file.fileno()
        self._pending: list[_Spooled | PlainRow] = []  # of one kind: `_kind`
        self._kind = 0  # of the pending frame
        self._kinds: list[tuple[PlainTemplate, str]] = []  # held, so an id in `_kind_of` is never another's
        self._kind_of: dict[tuple[int, str], int] = {}
        self._size = 0  # bytes written
        self._shared: list[GraderSpec] = []  # held, so an id in `_index` is never another object's
        self._index: dict[int, int] = {}  # id of a spec -> its place in `_shared`
        self._last: list[GraderSpec] = []  # the last specs all in the table, and their `order`
        self._last_order: list[int] = []
        self.count = 0

    def add_plain(self, test: Test, template: PlainTemplate, row: PlainRow) -> None:
        """Add `test`, which `template` built from `row`."""
        location = test.location
        if location is None:  # never: a template's tests have one
            self.add(test)
            return
        if self._kind == 0 or (template, location.file) != self._kinds[self._kind - 1]:
            key = (id(template), location.file)
            kind = self._kind_of.get(key)
            if kind is None:
                self._kinds.append((template, location.file))
                kind = self._kind_of[key] = len(self._kinds)
            self._start_frame(kind)
        self._pending.append(row)
        self.count += 1
        if len(self._pending) >= _FRAME_TESTS:
            self._write_frame()

    def _start_frame(self, kind: int) -> None:
        if kind == self._kind:
            return
        if self._pending:
            self._write_frame()
        self._kind = kind

    def add(self, test: Test) -> None:
        if self._kind != 0:
            self._start_frame(0)
        order: list[int] | None = None
        graders = test.graders
        if not graders:
            pass
        elif len(graders) == len(self._last) and all(map(operator.is_, graders, self._last)):
            order = self._last_order  # the same spec objects as the last ones all in the table
            test = msgspec.structs.replace(test, graders=[])
        else:
            order, inline = [], []
            for spec in graders:
                index = self._index.get(id(spec))
                if index is None and len(self._shared) < _SHARED_SPECS:
                    index = self._index[id(spec)] = len(self._shared)
                    self._shared.append(spec)
                if index is None:
                    inline.append(spec)
                    order.append(-1)
                else:
                    order.append(index)
            if not inline:
                self._last, self._last_order = graders, order  # held: an id is never another's
            test = msgspec.structs.replace(test, graders=inline)
        self._pending.append(_Spooled(test, order))
        self.count += 1
        if len(self._pending) >= _FRAME_TESTS:
            self._write_frame()

    def _write_frame(self) -> None:
        payload = _ENCODER.encode(self._pending)
        self._pending = []
        frame = _HEADER.pack(len(payload), self._kind) + payload
        os.pwrite(self._fd, frame, self._size)
        self._size += len(frame)

    def __iter__(self) -> Iterator[Test]:
        if self._pending:
            self._write_frame()
        offset, end = 0, self._size  # tests added while reading are not read (none are)
        last_order: list[int] | None = None
        last_graders: list[GraderSpec] = []
        while offset < end:
            length, kind = _HEADER.unpack(os.pread(self._fd, _HEADER.size, offset))
            payload = os.pread(self._fd, length, offset + _HEADER.size)
            if len(payload) != length:  # our own file, cut short: never run fewer tests silently
                raise OSError(f"spooled tests: frame at {offset} is {len(payload)} of {length} bytes")
            offset += _HEADER.size + length
            if kind:
                template, file = self._kinds[kind - 1]
                build = template.test
                for row in _ROWS.decode(payload):
                    yield build(row, SourceLocation(file, row.line, row.col))
                continue
            shared = self._shared
            for spooled in _DECODER.decode(payload):
                test, order = spooled.test, spooled.order
                if order is None:
                    pass
                elif not test.graders:  # every spec from the table: one list for a run of tests
                    if order != last_order:
                        last_order, last_graders = order, [shared[i] for i in order]
                    test.graders = last_graders
                else:  # a fresh object of ours: its graders put back in place
                    inline = iter(test.graders)
                    test.graders = [shared[i] if i >= 0 else next(inline) for i in order]
                yield test

    def close(self) -> None:
        self._pending = []
        self._shared, self._index, self._last = [], {}, []
        self._kinds, self._kind_of = [], {}
        self._file.close()
