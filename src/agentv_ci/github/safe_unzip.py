"""Extract a downloaded (untrusted) zip archive without letting it write outside its directory.

Every entry name is checked before anything is written: absolute paths, drive letters, `..`
components, NUL bytes, symbolic links and duplicate names reject the whole archive (zip-slip).
The bytes actually inflated are counted, not the sizes the archive claims, so a zip bomb stops
at `max_total_bytes`.
"""

from __future__ import annotations

import re
import stat
import zipfile
import zlib
from pathlib import Path, PurePosixPath

__all__ = ["UnsafeArchiveError", "extract_zip"]

_DRIVE = re.compile(r"^[A-Za-z]:")
_CHUNK = 64 * 1024


class UnsafeArchiveError(Exception):
    """The archive is unreadable, too large, or an entry would escape the target directory."""


def extract_zip(archive: Path, target: Path, *, max_total_bytes: int, max_entries: int = 10_000) -> int:
    """Extract `archive` into `target` (created); returns the bytes written."""
    try:
        with zipfile.ZipFile(archive) as zipped:
            return _extract(zipped, target, max_total_bytes, max_entries)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
        raise UnsafeArchiveError(f"not a readable zip archive: {exc}") from None
    except OSError as exc:  # e.g. a file entry and a directory entry of the same name
        raise UnsafeArchiveError(f"cannot extract: {exc.strerror or exc}") from None


def _extract(zipped: zipfile.ZipFile, target: Path, max_total_bytes: int, max_entries: int) -> int:
    entries = zipped.infolist()
    if len(entries) > max_entries:
        raise UnsafeArchiveError(f"{len(entries)} entries (at most {max_entries})")
    root = target.resolve()
    planned: dict[str, PurePosixPath] = {}
    for info in entries:
        parts = _safe_parts(info.filename)
        if stat.S_ISLNK(info.external_attr >> 16):
            raise UnsafeArchiveError(f"symbolic link entry {info.filename[:200]!r}")
        key = "/".join(parts.parts).lower()
        if key in planned and not info.is_dir():
            raise UnsafeArchiveError(f"duplicate entry {info.filename[:200]!r}")
        planned[key] = parts
    root.mkdir(parents=True, exist_ok=True)
    written = 0
    for info in entries:
        destination = root.joinpath(*_safe_parts(info.filename).parts)
        if not destination.resolve().is_relative_to(root):  # defence in depth (a symlinked parent)
            raise UnsafeArchiveError(f"entry {info.filename[:200]!r} escapes the target")
        if info.is_dir():
            destination.mkdir(parents=True, exist_ok=True)
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        with zipped.open(info) as source, destination.open("xb") as sink:
            while chunk := source.read(_CHUNK):
                written += len(chunk)
                if written > max_total_bytes:
                    raise UnsafeArchiveError(f"more than {max_total_bytes:,} bytes once extracted")
                sink.write(chunk)
    return written


def _safe_parts(name: str) -> PurePosixPath:
    """The entry's relative path, or `UnsafeArchiveError` when it could land outside the target."""
    shown = repr(name[:200])
    if "\x00" in name:
        raise UnsafeArchiveError(f"entry name with a NUL byte {shown}")
    normal = name.replace("\\", "/")
    if normal.startswith("/") or _DRIVE.match(normal):
        raise UnsafeArchiveError(f"absolute entry path {shown}")
    parts = [part for part in normal.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise UnsafeArchiveError(f"entry path with '..' {shown}")
    if not parts:
        raise UnsafeArchiveError(f"empty entry path {shown}")
    return PurePosixPath(*parts)
