"""JSONL datasets: one test per line, decoded with a typed msgspec decoder; each line keeps its
own line number for diagnostics. A dataset is read line by line as its cases are taken, so a run
holds one line at a time, however large the dataset."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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

_UNSET: Any = msgspec.UNSET


class JsonlCase(msgspec.Struct, forbid_unknown_fields=True):
    """The happy-path shape of a JSONL test line. Lines that do not fit (unknown keys, wrong types)
    are re-decoded generically so the loader can report every problem with its location."""

    id: str
    input: Any = _UNSET
    criteria: str | msgspec.UnsetType = _UNSET
    expected_output: Any = _UNSET
    assertions: list[Any] | msgspec.UnsetType = _UNSET
    execution: dict[str, Any] | msgspec.UnsetType = _UNSET
    input_files: list[str] | msgspec.UnsetType = _UNSET
    vars: dict[str, Any] | msgspec.UnsetType = _UNSET
    metadata: dict[str, Any] | msgspec.UnsetType = _UNSET
    tags: list[str] | msgspec.UnsetType = _UNSET
    description: str | msgspec.UnsetType = _UNSET
    note: str | msgspec.UnsetType = _UNSET
    conversation_id: str | msgspec.UnsetType = _UNSET
    rubrics: list[Any] | msgspec.UnsetType = _UNSET
    workspace: Any = _UNSET


_DECODER = msgspec.json.Decoder(JsonlCase)
_BYTE = re.compile(r"\(byte (\d+)\)")
# Bounds on what one dataset may cost in memory: the file, and one line (one test).
MAX_JSONL_BYTES = 1024 * 1024 * 1024
MAX_LINE_BYTES = 16 * 1024 * 1024


def _as_dict(case: JsonlCase) -> dict[str, Any]:
    """The fields that were present on the line (UNSET ones are dropped by `to_builtins`)."""
    out: dict[str, Any] = msgspec.to_builtins(case)
    return out


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


def _cases(handle: Iterator[bytes], file: str, ctx: LoadContext) -> Iterator[tuple[Any, Node]]:
    env = ctx.env
    for number, line in enumerate(handle, start=1):
        if line.endswith(b"\n"):
            line = line[:-1]
        if number == 1 and line.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte order mark (Windows editors)
            line = line[3:]
        if not line.strip():
            continue
        if len(line) > MAX_LINE_BYTES:
            ctx.report(
                "E005",
                f"line {number} is longer than {MAX_LINE_BYTES // (1024 * 1024)} MiB",
                SourceLocation(file, number, 1),
                "one line is one test; move large content into files it references",
            )
            continue
        deep = too_deep(line)
        if deep is not None:  # refused before decoding: a deep value would exhaust the stack
            ctx.report(
                "E005",
                f"line {number} is nested too deeply (more than {MAX_JSON_DEPTH} levels)",
                SourceLocation(file, number, len(line[:deep].decode("utf-8", "replace")) + 1),
                "flatten this structure; a test never needs this much nesting",
            )
            continue
        raw: Any
        try:
            raw = _as_dict(_DECODER.decode(line))
        except (msgspec.DecodeError, UnicodeDecodeError):
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
                continue
            try:
                raw = msgspec.json.decode(line)
            except msgspec.DecodeError as exc:
                match = _BYTE.search(str(exc))
                col = int(match.group(1)) + 1 if match else len(line.rstrip()) + 1
                message = str(exc).split(" (byte")[0]
                ctx.report(
                    "E005",
                    f"invalid JSON on line {number}: {message}",
                    SourceLocation(file, number, col),
                    "each line must be one JSON object",
                )
                continue
        if may_hold_oversized_int(line) and (big := oversized_int(raw)) is not None:
            ctx.report(
                "E005",
                f"line {number} holds {describe_int(big)}, too large to be a number (64 bits at most)",
                SourceLocation(file, number, 1),
                "quote it to keep it as text",
            )
            continue
        text = line.decode("utf-8", errors="replace")
        if "${{" in text:
            raw = interpolate_env(raw, env)
        yield raw, Node(LineLocator(file, number, text))
