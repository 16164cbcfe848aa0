"""Files renamed into place: a random temporary name created exclusively, never through a symlink,
and a symlinked destination refused (E007)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentv_ci.errors import ExitCode
from agentv_ci.security.atomic_write import PendingFile, SymlinkedDestination, write_atomically


def test_a_file_is_replaced_whole_and_no_temporary_file_is_left(tmp_path: Path) -> None:
    target = tmp_path / "sidecar.jsonl"
    target.write_bytes(b"old\n")
    write_atomically(target, b"new\n")
    assert target.read_bytes() == b"new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["sidecar.jsonl"]


def test_temporary_names_are_random_and_never_reuse_an_existing_file(tmp_path: Path) -> None:
    target = tmp_path / "plan.jsonl"
    with PendingFile(target) as first, PendingFile(target) as second:
        assert first.path != second.path and first.path.parent == tmp_path
        assert str(os.getpid()) not in first.path.name
    assert list(tmp_path.iterdir()) == []  # both discarded


def test_a_symlinked_destination_is_refused_with_e007(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"precious\n")
    link = tmp_path / "repo" / "geo.baseline.jsonl"
    link.parent.mkdir()
    link.symlink_to(outside)
    with pytest.raises(SymlinkedDestination) as raised:
        write_atomically(link, b"rows\n")
    assert raised.value.exit_code == ExitCode.BAD_INPUT
    assert raised.value.render().startswith(f"{link}: error[E007]: refusing to write through a symlink")
    assert outside.read_bytes() == b"precious\n" and link.is_symlink()
    assert [p.name for p in link.parent.iterdir()] == ["geo.baseline.jsonl"]  # nothing else created


def test_a_symlink_planted_while_writing_is_refused_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"precious\n")
    target = tmp_path / "index.jsonl"
    with pytest.raises(SymlinkedDestination), PendingFile(target) as pending:
        pending.handle.write(b"rows\n")
        target.symlink_to(outside)
        pending.commit()
    assert outside.read_bytes() == b"precious\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.jsonl", "outside.txt"]
