"""Sorting tuples in bounded memory: chunks of `CHUNK` items are sorted, spilled to a temporary
directory as JSON lines and merged. Used to count a run's rows against its plan without holding
either (`external_sorted`), and to read a run's rows in key order for the JUnit report
(`stored_results`, through `sorted_records`: byte strings, one per row, that sort as its key does).
"""

from __future__ import annotations

import heapq
import tempfile
from collections.abc import Generator, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import msgspec

__all__ = ["CHUNK", "external_sorted", "sorted_records", "spilled_sort"]

CHUNK = 50_000  # items sorted in memory at a time
_LINES_AT_ONCE = 4096  # records spilled with one write

StrTuple = tuple[str, ...]
Key = TypeVar("Key", bound=tuple[Any, ...])
_ENCODER = msgspec.json.Encoder()
_STR_TUPLES = msgspec.json.Decoder(StrTuple)


def external_sorted(items: Iterable[StrTuple], *, chunk: int = CHUNK) -> Generator[StrTuple, None, None]:
    """`items` in sorted order. Every item is read (on the first `next`) before the first is yielded,
    so the source may be changed (appended to) while the sorted items are consumed. Memory: `chunk`
    items. `close()` a generator left unfinished to remove its spill directory at once."""
    return spilled_sort(items, _STR_TUPLES, chunk=chunk, prefix="agentv-ci-keys-")


def spilled_sort(
    items: Iterable[Key], decoder: msgspec.json.Decoder[Key], *, chunk: int, prefix: str
) -> Generator[Key, None, None]:
    """`items` sorted as `external_sorted` sorts them; `decoder` reads a spilled item back, and the
    spill directory's name starts with `prefix`."""
    with tempfile.TemporaryDirectory(prefix=prefix) as spill_dir:
        spilled: list[Path] = []
        batch: list[Key] = []
        for item in items:
            batch.append(item)
            if len(batch) >= chunk:
                spilled.append(_spill(sorted(batch), Path(spill_dir) / f"{len(spilled)}.jsonl"))
                batch = []
        batch.sort()
        if not spilled:
            yield from batch
            return
        yield from heapq.merge(*(_read(path, decoder) for path in spilled), batch)


def _spill(items: list[Key], path: Path) -> Path:
    buffer = bytearray()
    with path.open("wb") as handle:
        for item in items:
            _ENCODER.encode_into(item, buffer, len(buffer))
            buffer.extend(b"\n")
            if len(buffer) > 1 << 20:
                handle.write(buffer)
                buffer.clear()
        handle.write(buffer)
    return path


def _read(path: Path, decoder: msgspec.json.Decoder[Key]) -> Iterator[Key]:
    with path.open("rb") as handle:
        for line in handle:
            yield decoder.decode(line)


def sorted_records(blocks: Iterable[list[bytes]], *, chunk: int, prefix: str) -> Generator[bytes, None, None]:
    """The records of `blocks` (byte strings without a newline) in sorted order, as `spilled_sort`
    sorts items: spilled a line each, so neither side encodes nor decodes them."""
    with tempfile.TemporaryDirectory(prefix=prefix) as spill_dir:
        spilled: list[Path] = []
        batch: list[bytes] = []
        for block in blocks:
            batch += block
            if len(batch) >= chunk:
                batch.sort()
                path = Path(spill_dir) / f"{len(spilled)}.lines"
                with path.open("wb") as handle:
                    for start in range(0, len(batch), _LINES_AT_ONCE):  # not a copy of the whole batch
                        handle.write(b"\n".join(batch[start : start + _LINES_AT_ONCE]) + b"\n")
                spilled.append(path)
                batch = []
        batch.sort()
        if not spilled:
            yield from batch
            return
        yield from heapq.merge(*(_read_lines(path) for path in spilled), batch)


def _read_lines(path: Path) -> Iterator[bytes]:
    with path.open("rb") as handle:
        for line in handle:
            yield line[:-1]
