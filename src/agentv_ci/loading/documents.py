"""Reading referenced YAML files into located documents, with errors as diagnostics."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from agentv_ci.errors import LoadError
from agentv_ci.loading.context import LoadContext
from agentv_ci.loading.interpolate import interpolate_env
from agentv_ci.loading.yaml_source import DuplicateKeys, MarkedDocument, parse_yaml
from agentv_ci.model.source import SourceLocation

# Eval files, case files, templates and prompts larger than this are refused before they are read:
# a hostile file can't exhaust memory (real suites of 5,000 cases are about 1 MiB).
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024


def may_read(
    path: Path, ctx: LoadContext, where: SourceLocation | None, max_bytes: int, split_hint: str
) -> bool:
    """Whether `path` may be read: recorded as a dependency; E305 when it lies outside the repository
    (symlinks followed), E001 when it is not a regular file or is larger than `max_bytes` (with
    `split_hint`). Problems are reported at `where`, else at the file itself."""
    ctx.depend(path)
    at = where or SourceLocation(str(path))
    if not ctx.confined(path, at, path):
        return False
    if not_regular_file(path):
        ctx.report("E001", f"not a regular file: {path}", at)
        return False
    if too_large(path, max_bytes):
        ctx.report("E001", f"file is larger than {max_bytes // (1024 * 1024)} MiB: {path}", at, split_hint)
        return False
    return True


def read_text(path: Path, ctx: LoadContext, where: SourceLocation | None = None) -> str | None:
    """File text, or None with E001 (at `where`, else at the file itself); E305 when the file lies
    outside the repository (symlinks followed)."""
    if not may_read(path, ctx, where, MAX_DOCUMENT_BYTES, "split it into several files"):
        return None
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if path.is_symlink():
            message = f"broken symbolic link to {os.readlink(path)}"
        elif where is None and any(ch in path.name for ch in "*?["):
            message = f"no files match {path}"
        else:
            message = f"file not found: {path}"
        ctx.report("E001" if where is None else "E301", message, where or SourceLocation(str(path)))
    except IsADirectoryError:
        ctx.report("E001", f"expected a file, found a directory: {path}", where or SourceLocation(str(path)))
    except UnicodeDecodeError as exc:
        ctx.report(
            "E001",
            f"file is not valid UTF-8 (byte 0x{exc.object[exc.start]:02x})",
            _byte_location(path, exc.object, exc.start),
            "save the file as UTF-8",
        )
    except OSError as exc:
        ctx.report("E001", f"cannot read {path}: {exc.strerror or exc}", where or SourceLocation(str(path)))
    return None


def not_regular_file(path: Path) -> bool:
    """True for a FIFO, socket or device (reading one could block forever or never end)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False  # missing or unreadable: the read reports it
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def too_large(path: Path, limit: int) -> bool:
    """True when `path` is a file of more than `limit` bytes (missing or unreadable: False, the read
    reports it)."""
    try:
        return path.stat().st_size > limit
    except OSError:
        return False


def _byte_location(path: Path, data: bytes, offset: int) -> SourceLocation:
    """line:col (in characters) of byte `offset`."""
    line_start = data.rfind(b"\n", 0, offset) + 1
    col = len(data[line_start:offset].decode("utf-8", errors="replace")) + 1
    return SourceLocation(str(path), data.count(b"\n", 0, offset) + 1, col)


def yaml_error_code(message: str) -> str:
    if message.startswith("duplicate key"):
        return "E003"
    if "alias bomb" in message or "nested too deeply" in message or "maximum nesting depth" in message:
        return "E004"
    return "E002"


def parse_document(text: str, path: Path, ctx: LoadContext) -> MarkedDocument | None:
    """Parse YAML text with `${{ VAR }}` applied to every string value; syntax errors -> diagnostics."""
    try:
        doc = parse_yaml(text, str(path))
    except LoadError as exc:
        for error in exc.errors if isinstance(exc, DuplicateKeys) else [exc]:
            loc = error.location or SourceLocation(str(path))
            ctx.report(yaml_error_code(error.message), error.message, loc, error.hint)
        return None
    if "${{" in text:
        doc.data = interpolate_env(doc.data, ctx.env)
    return doc


def read_document(path: Path, ctx: LoadContext, where: SourceLocation | None = None) -> MarkedDocument | None:
    text = read_text(path, ctx, where)
    if text is None:
        return None
    return parse_document(text, path, ctx)
