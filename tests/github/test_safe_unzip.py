"""Safe extraction of untrusted zip archives: zip-slip, links, bombs, duplicates."""

from __future__ import annotations

import stat
import zipfile
from pathlib import Path

import pytest

from agentv_ci.github.safe_unzip import UnsafeArchiveError, extract_zip


def _archive(tmp_path: Path, entries: list[tuple[str | zipfile.ZipInfo, bytes]]) -> Path:
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in entries:
            archive.writestr(name, content)
    return path


def test_a_plain_archive_is_extracted(tmp_path: Path) -> None:
    archive = _archive(tmp_path, [("index.jsonl", b"{}\n"), ("sub/dir/x.txt", b"x"), ("./y.txt", b"yy")])
    written = extract_zip(archive, tmp_path / "out", max_total_bytes=1_000)
    assert written == 6
    assert (tmp_path / "out" / "sub" / "dir" / "x.txt").read_bytes() == b"x"
    assert (tmp_path / "out" / "y.txt").read_bytes() == b"yy"


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("../evil.txt", "'..'"),
        ("ok/../../evil.txt", "'..'"),
        ("..\\..\\evil.txt", "'..'"),
        ("/etc/evil.txt", "absolute"),
        ("\\\\server\\share\\evil.txt", "absolute"),
        ("C:/evil.txt", "absolute"),
        ("c:evil.txt", "absolute"),
    ],
)
def test_entries_that_escape_reject_the_whole_archive(tmp_path: Path, name: str, why: str) -> None:
    archive = _archive(tmp_path, [("index.jsonl", b"{}"), (name, b"owned")])
    with pytest.raises(UnsafeArchiveError, match=why):
        extract_zip(archive, tmp_path / "deep" / "out", max_total_bytes=1_000)
    assert not (tmp_path / "deep" / "out" / "index.jsonl").exists()  # checked before writing anything
    assert not list(tmp_path.rglob("evil.txt"))


def test_a_symbolic_link_entry_is_rejected(tmp_path: Path) -> None:
    link = zipfile.ZipInfo("index.jsonl")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    archive = _archive(tmp_path, [(link, b"/etc/passwd")])
    with pytest.raises(UnsafeArchiveError, match="symbolic link"):
        extract_zip(archive, tmp_path / "out", max_total_bytes=1_000)


def test_a_zip_bomb_stops_at_the_cap(tmp_path: Path) -> None:
    archive = _archive(tmp_path, [("bomb.bin", b"\0" * 5_000_000)])
    assert archive.stat().st_size < 50_000
    with pytest.raises(UnsafeArchiveError, match="more than 1,000,000 bytes once extracted"):
        extract_zip(archive, tmp_path / "out", max_total_bytes=1_000_000)


def test_duplicate_entries_and_too_many_entries_are_rejected(tmp_path: Path) -> None:
    duplicated = _archive(tmp_path, [("a.txt", b"1"), ("./a.txt", b"2")])  # one file once normalised
    with pytest.raises(UnsafeArchiveError, match="duplicate"):
        extract_zip(duplicated, tmp_path / "out1", max_total_bytes=1_000)
    many = _archive(tmp_path, [(f"f{i}", b"") for i in range(11)])
    with pytest.raises(UnsafeArchiveError, match="11 entries"):
        extract_zip(many, tmp_path / "out2", max_total_bytes=1_000, max_entries=10)


def test_not_a_zip(tmp_path: Path) -> None:
    path = tmp_path / "x.zip"
    path.write_bytes(b"not a zip at all")
    with pytest.raises(UnsafeArchiveError, match="not a readable zip archive"):
        extract_zip(path, tmp_path / "out", max_total_bytes=1_000)
