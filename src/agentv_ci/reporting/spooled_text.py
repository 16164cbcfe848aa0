"""Text written in pieces and kept as UTF-8, in memory up to `SPOOL_BYTES` a part and in a temporary
file past it, so a report as large as its run never costs memory (reporting/junit.py spools each
suite's properties and cases, and the body under the root, whose totals come last). One spool copies
into another, or into a `Utf8File`, as the pieces or the bytes they are, never decoded and encoded
again."""

from __future__ import annotations

import codecs
import os
import shutil
import tempfile
from typing import IO

__all__ = ["SPOOL_BYTES", "SpooledText", "Utf8File"]

SPOOL_BYTES = 1024 * 1024  # per spooled part, before it moves to disk


class SpooledText:
    """Text gathered in memory in pieces and moved to a temporary file past `SPOOL_BYTES`, as UTF-8:
    one spool copies into another as the pieces or the bytes they are, never decoded and encoded again."""

    def __init__(self) -> None:
        self._pieces: list[str] = []
        self._size = 0
        self._file: IO[bytes] | None = None

    def write(self, text: str) -> None:
        self._pieces.append(text)
        self._size += len(text)
        if self._size > SPOOL_BYTES:
            self._flush()

    def _flush(self) -> IO[bytes]:
        """Move the pieces to the file (made on the first call); returns the file."""
        if self._file is None:
            self._file = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close())
        self._file.write("".join(self._pieces).encode("utf-8"))
        self._pieces.clear()
        self._size = 0
        return self._file

    def empty(self) -> bool:
        return not self._pieces and (self._file is None or not self._file.tell())

    def copy_to(self, out: IO[str] | SpooledText | Utf8File) -> None:
        if isinstance(out, Utf8File):  # bytes to bytes
            if self._file is not None:
                self._file.seek(0)
                while block := self._file.read(1 << 20):
                    out.write_bytes(block)
            out.write("".join(self._pieces))
            return
        if isinstance(out, SpooledText):
            if self._file is not None:
                target = out._flush()  # what `out` holds goes first
                self._file.seek(0)
                shutil.copyfileobj(self._file, target, 1 << 20)
            out._pieces.extend(self._pieces)
            out._size += self._size
            if out._size > SPOOL_BYTES:
                out._flush()
            return
        if self._file is not None:
            self._file.seek(0)
            decoder = codecs.getincrementaldecoder("utf-8")()  # a block may end inside a character
            while block := self._file.read(1 << 20):
                out.write(decoder.decode(block))
            out.write(decoder.decode(b"", final=True))
        out.write("".join(self._pieces))

    def close(self) -> None:
        self._pieces.clear()
        if self._file is not None:
            self._file.close()
            self._file = None


class Utf8File:
    """A binary file written as `open(path, "w", encoding="utf-8")` writes one (UTF-8, each newline
    as the platform's), so a spool's bytes go to it as they are."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self._newline = os.linesep.encode()

    def write(self, text: str) -> None:
        self.write_bytes(text.encode("utf-8"))

    def write_bytes(self, data: bytes) -> None:
        self.raw.write(data if self._newline == b"\n" else data.replace(b"\n", self._newline))
