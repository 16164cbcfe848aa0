"""The console through the redaction layer and the print sanitiser: stdout and stderr wrapped so that
everything printed (progress, results, errors, warnings, selection reasons, the Action's log) has
every known secret replaced by `***` and cannot act on a terminal or on the Actions runner:

- always: control characters become visible escapes (`\\x1b`, `\\x07`, a bare CR as `\\r`; LF, TAB
  and CRLF stay), so no ESC/CSI/OSC sequence, BEL or carriage return reaches the terminal;
- always: GitLab's section markers (`section_start:`, `section_end:`), also split over two writes,
  are broken with a zero-width space, so data cannot open, close or collapse a section of a GitLab
  job log (GitLab's own log viewer needs no ESC or CR to act on one);
- under GitHub Actions (`GITHUB_ACTIONS=true`): `::` at the start of a line, also after leading
  whitespace and across separate writes, is broken with a zero-width space, and so is `##[` anywhere,
  so no printed text becomes a workflow command.

agentv-ci's own workflow commands (annotations, notices, `::add-mask::`) are printed by one function,
`print_workflow_command`, which writes past the `::` check (still redacted, still one line).
In GitHub Actions each secret is announced with `::add-mask::` before it is first used.
"""

from __future__ import annotations

import io
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TextIO

from agentv_ci.security.redaction import SECRETS, SecretRegistry
from agentv_ci.text_safety import SECTION_MARKER, escape_controls, neutralise_log_sections

__all__ = ["LineGuard", "RedactingStream", "add_mask_line", "print_workflow_command", "protected_console"]

_ZWSP = "\u200b"
_MARKER_TAIL = len(SECTION_MARKER) - 1  # what of a marker the last write may have begun


class LineGuard:
    """The print sanitiser for one stream, fed the text in the pieces it is written in: it remembers
    whether the current line holds only whitespace so far (a `::` split over two writes is caught)."""

    def __init__(self, *, workflow_commands: bool) -> None:
        self.workflow_commands = workflow_commands
        self._head: str | None = ""  # the current line while it is whitespace (and maybe one ":")
        self._tail = ""  # the last two characters written (a `##[` split over two writes)
        self._section_tail = ""  # the last characters written (a `section_` split over two writes)

    def feed(self, text: str) -> str:
        text = escape_controls(text)
        if not text:
            return text
        text = self._sections(text)
        if not self.workflow_commands:
            return text
        out = "".join(self._line(line) for line in text.splitlines(keepends=True))
        tail = self._tail
        if (tail.endswith("##") and out.startswith("[")) or (tail.endswith("#") and out.startswith("#[")):
            out = _ZWSP + out
        if "##[" in out:
            out = out.replace("##[", "#" + _ZWSP + "#[")
        self._tail = (tail + out)[-2:]
        return out

    def _line(self, piece: str) -> str:
        """One piece that ends at the latest at a line feed."""
        head = self._head
        ends_line = piece.endswith("\n")
        if head is not None:
            body = piece[:-1] if ends_line else piece
            stripped = body.lstrip()
            indent = body[: len(body) - len(stripped)]
            if head.endswith(":") and not indent and stripped.startswith(":"):
                piece = _ZWSP + piece  # `:` ended the last write, `:` starts this one
                head = None
            elif not head.endswith(":") and stripped.startswith("::"):
                piece = indent + ":" + _ZWSP + stripped[1:] + ("\n" if ends_line else "")
                head = None
            elif not head.endswith(":") and stripped == ":":
                head = head + body
            elif stripped:
                head = None
            else:
                head = head + body
        self._head = "" if ends_line else head
        return piece

    def _sections(self, text: str) -> str:
        tail = self._section_tail  # a beginning of `section_` that ended the last write, or ""
        if SECTION_MARKER in text:
            text = neutralise_log_sections(text)
        if tail and text.startswith(SECTION_MARKER[len(tail) :]):
            text = _ZWSP + text  # the marker began in the last write: split it at the seam
        end = (text if len(text) >= _MARKER_TAIL or not tail else tail + text)[-_MARKER_TAIL:]
        start = end.rfind("s")  # the marker's only `s`: where a beginning of it at the end can start
        held = end[start:] if start >= 0 else ""
        self._section_tail = held if held and SECTION_MARKER.startswith(held) else ""
        return text

    def command(self) -> str:
        """Before one of our own workflow commands: a line feed when a line is open."""
        at_start = self._head == ""
        self._head, self._tail, self._section_tail = "", "\n", ""
        return "" if at_start else "\n"

    def redraw(self) -> None:
        """After a progress bar was redrawn at the start of its line: the line holds text."""
        self._head = None


class RedactingStream(io.TextIOBase):
    """A text stream that redacts and sanitises what it writes and passes it to `inner`."""

    def __init__(
        self, inner: TextIO, registry: SecretRegistry = SECRETS, *, workflow_commands: bool = False
    ) -> None:
        super().__init__()
        self.inner = inner
        self.registry = registry
        self.guard = LineGuard(workflow_commands=workflow_commands)
        self._lock = threading.RLock()

    def write(self, text: str) -> int:
        with self._lock:
            self.inner.write(self.guard.feed(self.registry.redact(text)))
        return len(text)

    def write_command(self, line: str) -> None:
        """One of agentv-ci's own workflow commands, on a line of its own, past the `::` check."""
        with self._lock:
            self.inner.write(self.guard.command() + self.registry.redact(line) + "\n")

    def write_mask(self, line: str) -> None:
        """`::add-mask::` for one line of a secret: not redacted (it is the secret), past the check."""
        with self._lock:
            self.inner.write(self.guard.command() + add_mask_line(line))
            self.inner.flush()

    def redraw(self, text: str) -> None:
        """A progress bar redrawn in place: a carriage return of ours, then sanitised text."""
        with self._lock:
            self.inner.write("\r" + neutralise_log_sections(escape_controls(self.registry.redact(text))))
            self.guard.redraw()

    def flush(self) -> None:
        self.inner.flush()

    def isatty(self) -> bool:
        return self.inner.isatty()

    def fileno(self) -> int:
        return self.inner.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.inner, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self.inner, "errors", None)


def add_mask_line(value: str) -> str:
    """The workflow command that makes the GitHub runner mask `value` in the log from now on."""
    return f"::add-mask::{value}\n"


def print_workflow_command(line: str) -> None:
    """Print one of agentv-ci's own workflow commands (`::error file=...::message`, built with every
    part escaped by github.annotations.workflow_command) to stdout. The one way a line that starts
    with `::` reaches our output under GitHub Actions: everything else printed is neutralised."""
    if not line.startswith("::") or "\n" in line or "\r" in line:
        raise ValueError(f"not a one-line workflow command: {line[:80]!r}")
    line = escape_controls(line)
    stream = sys.stdout
    if isinstance(stream, RedactingStream):
        stream.write_command(line)
    else:
        stream.write(line + "\n")
    stream.flush()


@contextmanager
def protected_console(env: Mapping[str, str], registry: SecretRegistry = SECRETS) -> Iterator[None]:
    """For the duration: the secrets of `env` registered (announced with `::add-mask::` first when
    `GITHUB_ACTIONS=true`, and every later one too) and stdout/stderr redacted."""
    stdout, stderr = sys.stdout, sys.stderr
    previous_announce = registry.announce
    in_actions = env.get("GITHUB_ACTIONS") == "true"
    guarded_stdout = RedactingStream(stdout, registry, workflow_commands=in_actions)
    if in_actions:

        def announce(value: str) -> None:
            for line in value.splitlines():  # the lines of a value hold no CR or LF
                guarded_stdout.write_mask(line)

        registry.announce = announce
    registry.add_environment(env)
    sys.stdout = guarded_stdout  # type: ignore[assignment]
    sys.stderr = RedactingStream(stderr, registry, workflow_commands=in_actions)  # type: ignore[assignment]
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        sys.stdout, sys.stderr = stdout, stderr
        registry.announce = previous_announce
