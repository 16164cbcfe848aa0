"""Workspace resets that never destroy: a snapshot of a directory, kept outside it.

A snapshot is taken when a workspace has been prepared (template, repos, `before_all`). A reset puts
the directory back: files changed or deleted since are restored, files created since are removed
(`fast`: those git does not ignore; `strict`: ignored ones too). Nothing that was there at the
snapshot is ever deleted: ignored files present then (`.env`, `.venv/`) and empty directories are
left as they are, and so are the paths the run itself writes (`protected`: its output directory,
its cache). No commit is made anywhere: the snapshot is a private index and object store in a
temporary directory of the run (`git --git-dir <store> --work-tree <directory>`, a tree written with
`write-tree`), so no `.git` appears in the workspace and the index, branches and history of a
repository the directory belongs to are never touched.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from agentv_ci.running.repos import RepoError, git
from agentv_ci.security.confinement import real_path


def _relative_entries(directory: Path, paths: Iterable[Path]) -> list[str]:
    """`paths` that lie inside `directory`, relative to it (as git lists them, without a slash)."""
    root = real_path(directory)
    entries = []
    for path in paths:
        real = real_path(path)
        if real != root and real.is_relative_to(root):
            entries.append(real.relative_to(root).as_posix())
    return entries


def _covered(entry: str, kept: frozenset[str]) -> bool:
    """True when `entry` was there at the snapshot: listed itself, or inside a directory that was."""
    name = entry.rstrip("/")
    return name in kept or any(name.startswith(k + "/") for k in kept)


def _holds_kept(entry: str, kept: frozenset[str]) -> bool:
    """True when the directory `entry` contains something that was there at the snapshot."""
    name = entry.rstrip("/")
    return any(k.startswith(name + "/") for k in kept)


@dataclass
class Snapshot:
    """`directory` as it was: its files in `tree` (in the private `store`), and `kept`: what was
    there that git does not track (ignored files, empty directories, protected paths)."""

    directory: Path
    store: Path
    tree: str
    kept: frozenset[str]

    def _git(self, *args: str) -> list[str]:
        return [f"--git-dir={self.store}", f"--work-tree={self.directory}", *args]

    async def _untracked(self, *, ignored: bool) -> list[str]:
        flags = ["--others", "--directory", "--exclude-standard", "-z"]
        if ignored:
            flags.insert(1, "--ignored")
        listed = await git(*self._git("ls-files", *flags), cwd=self.directory)
        return [entry for entry in listed.split("\0") if entry]

    async def restore(self, mode: str) -> None:
        """Back to the snapshot; raises `RepoError` when git fails."""
        await git(*self._git("read-tree", "--reset", "-u", self.tree), cwd=self.directory)
        created = await self._untracked(ignored=False)
        if mode == "strict":
            created += await self._untracked(ignored=True)
        for entry in created:
            if _covered(entry, self.kept) or _holds_kept(entry, self.kept):
                continue
            _remove(self.directory, entry)

    def discard(self) -> None:
        shutil.rmtree(self.store, ignore_errors=True)


def _remove(directory: Path, entry: str) -> None:
    """Delete what the run created at `entry` (never following a symlink out of `directory`)."""
    parts = Path(entry.rstrip("/")).parts
    if not parts or ".." in parts or Path(entry).is_absolute():
        return
    target = directory.joinpath(*parts)
    try:
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        else:
            target.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise RepoError(f"cannot remove {target}: {exc.strerror or exc}") from None


async def take_snapshot(
    directory: Path, *, exclude: Iterable[str] = (), protected: Iterable[Path] = ()
) -> Snapshot:
    """Snapshot `directory`; `exclude`: relative paths left to someone else (cloned repositories),
    `protected`: paths the run writes (never restored, never removed). Raises `RepoError`."""
    store = Path(tempfile.mkdtemp(prefix="agentv-ci-snapshot-"))
    try:
        await git("init", "--quiet", "--bare", str(store))
        kept_paths = [Path(path).as_posix().removeprefix("./").strip("/") for path in exclude]
        kept_paths = [path for path in kept_paths if path not in ("", ".")]
        kept_paths += _relative_entries(directory, protected)
        with (store / "info" / "exclude").open("a", encoding="utf-8") as handle:
            handle.writelines(f"/{entry}\n" for entry in kept_paths)
        snapshot = Snapshot(directory, store, "", frozenset())
        await git(*snapshot._git("add", "--all", "--", "."), cwd=directory)
        snapshot.tree = await git(*snapshot._git("write-tree"), cwd=directory)
        present = await snapshot._untracked(ignored=False) + await snapshot._untracked(ignored=True)
        snapshot.kept = frozenset(entry.rstrip("/") for entry in [*present, *kept_paths])
    except BaseException:
        shutil.rmtree(store, ignore_errors=True)
        raise
    return snapshot
