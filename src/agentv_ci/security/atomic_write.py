"""Files written whole, then renamed into place, without ever following a symlink.

A repository under test is hostile: it may commit a symlink at the name of a temporary file we are
about to write (a PID is easy to guess in a CI container), or at the destination itself. So the
temporary file gets a random name in the destination's directory and is created with
`O_CREAT | O_EXCL | O_NOFOLLOW` (nothing that exists, a symlink included, is ever opened), and a
destination that is a symlink is refused with `SymlinkedDestination` (E007, exit 2) before anything
is written. The rename itself replaces a name and never writes through one.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from agentv_ci.errors import AgentvCiError
from agentv_ci.text_safety import printable

__all__ = ["PendingFile", "SymlinkedDestination", "refuse_symlink", "write_atomically"]

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_ATTEMPTS = 16  # random 64-bit names: a second attempt only after someone planted the first


class SymlinkedDestination(AgentvCiError):
    """A file agentv-ci would replace is a symlink: refused, so nothing outside its place changes."""

    code = "E007"

    def __init__(self, path: Path) -> None:
        from agentv_ci.model.source import SourceLocation  # here: start-up (`--help`) needs no msgspec

        target = os.readlink(path) if path.is_symlink() else "?"
        super().__init__(
            f"refusing to write through a symlink (it points to {target})",
            location=SourceLocation(str(path)),
            hint="delete the symlink (a file agentv-ci writes is never a link) and run again",
        )

    def render(self) -> str:

        text = f"{printable(self.location)}: error[{self.code}]: {printable(self.message)}"
        return text + (f"\n  hint: {self.hint}" if self.hint else "")


def refuse_symlink(path: Path) -> None:
    """Raise `SymlinkedDestination` when `path` is a symlink (dangling ones too)."""
    if path.is_symlink():
        raise SymlinkedDestination(path)


def _exclusive_temp(destination: Path, mode: int) -> tuple[Path, int]:
    """A new file `.<name>.<random>.tmp` beside `destination`, opened for writing."""
    for _ in range(_ATTEMPTS):
        path = destination.with_name(f".{destination.name}.{os.urandom(8).hex()}.tmp")
        try:
            return path, os.open(path, _FLAGS, mode)
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {destination} after {_ATTEMPTS} tries")


class PendingFile:
    """A new, exclusively created temporary file next to `destination`; `commit()` renames it into
    place, `discard()` removes it. Usable as a context manager that discards unless committed.
    `mode` is the new file's permissions (less the umask)."""

    def __init__(self, destination: Path, *, mode: int = 0o666) -> None:
        refuse_symlink(destination)
        self.destination = destination
        self.path, fd = _exclusive_temp(destination, mode)
        self.handle: BinaryIO = os.fdopen(fd, "wb")
        self._done = False

    def commit(self, *, durable: bool = False) -> None:
        """Close the file (fsync first when `durable`) and rename it over `destination`."""
        self.handle.flush()
        if durable:
            os.fsync(self.handle.fileno())
        self.handle.close()
        refuse_symlink(self.destination)  # planted while we wrote: still not followed, but refused
        os.replace(self.path, self.destination)
        self._done = True

    def discard(self) -> None:
        if not self._done:
            self.handle.close()
            self.path.unlink(missing_ok=True)
            self._done = True

    def __enter__(self) -> PendingFile:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.discard()


def write_atomically(destination: Path, data: bytes, *, durable: bool = False, mode: int = 0o666) -> None:
    """Replace `destination` with `data`: readers see the old file or the new one, never a part."""
    with PendingFile(destination, mode=mode) as pending:
        pending.handle.write(data)
        pending.commit(durable=durable)
