"""JSONL datasets: one test per line, decoded by msgspec; each line keeps its own line number for
diagnostics. A dataset is read a block of lines at a time as its cases are taken, so a run holds
about a megabyte of it (and one line, however long), however large the dataset."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

from agentv_ci.json_limits import (
    MAX_JSON_DEPTH,
    describe_int,
    may_hold_oversized_int,
    oversized_int,
    too_deep,
)
from agentv_ci.loading.context import LineLocator, LoadContext, Node
from agentv_ci.loading.documents import may_read
from agentv_ci.loading.interpolate import interpolate_env
from agentv_ci.model.source import SourceLocation

# Lines are decoded generically: a typed decode checked nothing the builder does not check again,
# and converting its Struct back to a dict cost more than the decode.
_DECODE = msgspec.json.Decoder().decode
_BYTE = re.compile(r"\(byte (\d+)\)")
# Bounds on what one dataset may cost in memory: the file, and one line (one test).
MAX_JSONL_BYTES = 1024 * 1024 * 1024
MAX_LINE_BYTES = 16 * 1024 * 1024
BLOCK_BYTES = 1024 * 1024  # lines are read in blocks of about this size


def read_jsonl_cases(
    path: Path, ctx: LoadContext, where: SourceLocation | None = None
) -> Iterator[tuple[Any, Node]]:
    """(raw case, node) per non-blank line, read as they are taken. Invalid JSON -> E005 at that line;
    non-objects -> E101."""
    if not may_read(path, ctx, where, MAX_JSONL_BYTES, "split the dataset into several files"):
        return
    try:
        handle = path.open("rb")
    except OSError as exc:
        missing = isinstance(exc, FileNotFoundError)
        ctx.report(
            "E301" if missing and where else "E001",
            f"cannot read {path}: {exc.strerror or exc}",
            where or SourceLocation(str(path)),
        )
        return
    with handle:
        try:
            yield from _cases(handle, str(path), ctx)
        except OSError as exc:  # the file went away or failed while it was read
            ctx.report(
                "E001", f"cannot read {path}: {exc.strerror or exc}", where or SourceLocation(str(path))
            )


def _cases(handle: BinaryIO, file: str, ctx: LoadContext) -> Iterator[tuple[Any, Node]]:
    reader = _LineReader(file, ctx)
    number = 0
    while lines := handle.readlines(BLOCK_BYTES):
        block = b"".join(lines)
        # What hardly any line holds is looked for once a block; a line is searched only when its
        # block has it (no match can span lines: each ends at its newline).
        long_digits = may_hold_oversized_int(block)
        placeholders = b"${{" in block
        for line in lines:
            number += 1
            found = reader.case(line, number, long_digits, placeholders)
            if found is not None:
                yield found


class _LineReader:
    """The lines of one dataset to cases, with the environment its first line was read with."""

    __slots__ = ("ctx", "env", "file")

    def __init__(self, file: str, ctx: LoadContext) -> None:
        self.file, self.ctx, self.env = file, ctx, ctx.env

    def case(
        self, line: bytes, number: int, long_digits: bool, placeholders: bool
    ) -> tuple[Any, Node] | None:
        """The case of one line and where it is, or None when there is none (blank, or reported)."""
        file, ctx = self.file, self.ctx
        if line.endswith(b"\n"):
            line = line[:-1]
        if number == 1 and line.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte order mark (Windows editors)
            line = line[3:]
        if not line or line.isspace():  # blank (what `strip()` would empty, without a copy)
            return None
        if len(line) > MAX_LINE_BYTES:
            ctx.report(
                "E005",
                f"line {number} is longer than {MAX_LINE_BYTES // (1024 * 1024)} MiB",
                SourceLocation(file, number, 1),
                "one line is one test; move large content into files it references",
            )
            return None
        deep = too_deep(line) if len(line) > MAX_JSON_DEPTH else None  # a short line is never too deep
        if deep is not None:  # refused before decoding: a deep value would exhaust the stack
            ctx.report(
                "E005",
                f"line {number} is nested too deeply (more than {MAX_JSON_DEPTH} levels)",
                SourceLocation(file, number, len(line[:deep].decode("utf-8", "replace")) + 1),
                "flatten this structure; a test never needs this much nesting",
            )
            return None
        raw: Any
        try:
            raw = _DECODE(line)
        except (msgspec.DecodeError, UnicodeDecodeError) as error:
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as exc:
                col = len(line[: exc.start].decode("utf-8", errors="replace")) + 1
                ctx.report(
                    "E005",
                    f"line {number} is not valid UTF-8 (byte 0x{line[exc.start]:02x})",
                    SourceLocation(file, number, col),
                    "save the file as UTF-8",
                )
                return None
            match = _BYTE.search(str(error))
            col = int(match.group(1)) + 1 if match else len(line.rstrip()) + 1
            message = str(error).split(" (byte")[0]
            ctx.report(
                "E005",
                f"invalid JSON on line {number}: {message}",
                SourceLocation(file, number, col),
                "each line must be one JSON object",
            )
            return None
        if long_digits and may_hold_oversized_int(line) and (big := oversized_int(raw)) is not None:
            ctx.report(
                "E005",
                f"line {number} holds {describe_int(big)}, too large to be a number (64 bits at most)",
                SourceLocation(file, number, 1),
                "quote it to keep it as text",
            )
            return None
        if placeholders and b"${{" in line:  # the line is valid UTF-8 (msgspec decoded it)
            raw = interpolate_env(raw, self.env)
        return raw, Node(LineLocator(file, number, line))
