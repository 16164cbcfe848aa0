"""Sorting string tuples in bounded memory: chunks of `CHUNK` items are sorted, spilled to a temporary
directory as JSON lines and merged (the JUnit report sorts a run's rows the same way, see
`stored_results`). Used to count a run's rows against its plan without holding either.
"""

from __future__ import annotations

import heapq
import tempfile
from collections.abc import Generator, Iterable, Iterator
from pathlib import Path

import msgspec

__all__ = ["CHUNK", "external_sorted"]

CHUNK = 50_000  # items sorted in memory at a time

StrTuple = tuple[str, ...]
_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(list[str])


def external_sorted(items: Iterable[StrTuple], *, chunk: int = CHUNK) -> Generator[StrTuple, None, None]:
    """`items` in sorted order. Every item is read (on the first `next`) before the first is yielded,
    so the source may be changed (appended to) while the sorted items are consumed. Memory: `chunk`
    items. `close()` a generator left unfinished to remove its spill directory at once."""
    with tempfile.TemporaryDirectory(prefix="agentv-ci-keys-") as spill_dir:
        spilled: list[Path] = []
        batch: list[StrTuple] = []
        for item in items:
            batch.append(item)
            if len(batch) >= chunk:
                spilled.append(_spill(sorted(batch), Path(spill_dir) / f"{len(spilled)}.jsonl"))
                batch = []
        batch.sort()
        if not spilled:
            yield from batch
            return
        yield from heapq.merge(*(_read(path) for path in spilled), batch)


def _spill(items: list[StrTuple], path: Path) -> Path:
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


def _read(path: Path) -> Iterator[StrTuple]:
    with path.open("rb") as handle:
        for line in handle:
            yield tuple(_DECODER.decode(line))
