"""Writing `index.jsonl`: one row a line, flushed at once, every secret the run knows redacted."""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import IO, Any

import msgspec

from agentv_ci.model.result import TestResult
from agentv_ci.results.written_rows import WrittenRows
from agentv_ci.security.redaction import SECRETS

__all__ = ["ResultsWriter"]

_ENCODER = msgspec.json.Encoder()


class ResultsWriter:
    """Append `TestResult` rows to `index.jsonl`, one line each, flushed at once (a crash loses nothing
    finished). Use as a context manager; creates parent directories. `seen`, when given, is told of
    every row written (and of rows it cannot describe), so the reports need not read them all back."""

    def __init__(self, path: Path, seen: WrittenRows | None = None) -> None:
        self.path = path
        self.seen = seen
        self._handle: IO[bytes] | None = None
        self._buffer = bytearray()

    def __enter__(self) -> ResultsWriter:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = self.path.open("ab", buffering=0)  # each row goes out in one write call
        if self.seen is not None:
            self.seen.opened_at(self._handle.seek(0, 2))
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def append(self, result: TestResult) -> TestResult:
        """Write `result` as one line; returns the row as written: with every secret the run knows
        replaced by `***` (security.redaction), so what is kept in memory and reported later (and
        truncated there) holds no secret either."""
        if self._handle is None:
            raise RuntimeError("ResultsWriter used outside its `with` block")
        self._buffer.clear()
        scrubbed = False
        try:
            _ENCODER.encode_into(result, self._buffer)
        except UnicodeEncodeError:  # a lone surrogate in model text: keep the row, replace the char
            self._buffer.clear()
            _ENCODER.encode_into(_scrub(msgspec.to_builtins(result)), self._buffer)
            scrubbed = True
        if SECRETS and SECRETS.contains_bytes(self._buffer):
            result = _redacted(result)
            self._buffer.clear()
            _ENCODER.encode_into(result, self._buffer)
            scrubbed = False  # `_redacted` scrubs too: `result` is what the line says
        self._buffer.extend(b"\n")
        written = self._handle.write(self._buffer)
        if written != len(self._buffer):  # a short write: the rest, as a buffered flush would
            _write_rest(self._handle, bytes(self._buffer[written or 0 :]))
        if self.seen is not None:
            if scrubbed:  # the line says what `result` does not (a replaced character)
                self.seen.lost()
            else:
                self.seen.add(result, len(self._buffer))
        return result

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def _write_rest(handle: IO[bytes], rest: bytes) -> None:
    while rest:
        written = handle.write(rest)
        if not written:
            raise OSError(f"{getattr(handle, 'name', 'index.jsonl')}: a row could not be written whole")
        rest = rest[written:]


def _redacted(result: TestResult) -> TestResult:
    """`result` with every string in it redacted (answers, error bodies, grader details...)."""
    tree = SECRETS.redact_tree(_scrub(msgspec.to_builtins(result)))
    return msgspec.convert(tree, TestResult)


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, dict):
        return {_scrub(k): _scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value
