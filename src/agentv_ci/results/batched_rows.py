"""Rows written to `index.jsonl` in batches, for commands that hold every row before writing
(`grade`): the same bytes as `ResultsWriter.append` row after row, without a flush (a system call)
per row. A run keeps `ResultsWriter`, whose row-at-once flush is what a crash must not lose."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import msgspec

from agentv_ci.model.result import TestResult
from agentv_ci.results.results_writer import ResultsWriter
from agentv_ci.security.redaction import SECRETS

__all__ = ["BATCH_BYTES", "write_rows"]

BATCH_BYTES = 1 << 20  # written when the buffer holds this much
_ENCODER = msgspec.json.Encoder()


def write_rows(path: Path, rows: Iterable[TestResult]) -> None:
    """Append `rows` to `path` (parents created), one JSON line each. A row the plain encoding cannot
    write as it is (a lone surrogate in its text, a secret the run knows) goes through
    `ResultsWriter.append`, which scrubs and redacts it, after the rows before it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = bytearray()
    with path.open("ab") as handle:
        for row in rows:
            mark = len(buffer)
            try:
                _ENCODER.encode_into(row, buffer, -1)
            except UnicodeEncodeError:
                plain = False
            else:
                plain = not (SECRETS and SECRETS.contains_bytes(buffer[mark:]))
            if plain:
                buffer.extend(b"\n")
                if len(buffer) >= BATCH_BYTES:
                    handle.write(buffer)
                    buffer.clear()
                continue
            del buffer[mark:]
            handle.write(buffer)
            buffer.clear()
            handle.flush()  # the rows before this one land first
            with ResultsWriter(path) as writer:
                writer.append(row)
        handle.write(buffer)
