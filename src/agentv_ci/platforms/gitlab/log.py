"""GitLab's collapsible job-log sections, written by agentv-ci only.

A section is opened by `ESC[0Ksection_start:<unix seconds>:<name>[collapsed=true]\\r ESC[0K<header>`
and closed by `ESC[0Ksection_end:<unix seconds>:<name>\\r ESC[0K` (docs.gitlab.com, "Custom
collapsible sections"). The console sanitiser escapes ESC and CR and breaks `section_` in everything
else printed (security.streams), so these lines go past it, like our own GitHub workflow commands:
the name is reduced to what GitLab's parser accepts (`[a-zA-Z0-9_.-]`) and the header, which may
hold data (a suite name), is escaped, redacted and has its own markers broken.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from agentv_ci.security.redaction import redact
from agentv_ci.security.streams import RedactingStream
from agentv_ci.text_safety import neutralise_log_sections, printable

__all__ = ["log_section", "section_end_line", "section_name", "section_start_line"]

_NOT_IN_NAME = re.compile(r"[^a-zA-Z0-9_.-]+")
_NAME_LIMIT = 64
_HEADER_LIMIT = 200
_ERASE_LINE = "\x1b[0K"


def section_name(text: str) -> str:
    """`text` as a section name GitLab accepts: runs of other characters become `_`, capped."""
    name = _NOT_IN_NAME.sub("_", text)[:_NAME_LIMIT].strip("_")
    return name or "section"


def _header(text: str) -> str:
    shown = neutralise_log_sections(printable(redact(text)))
    return shown if len(shown) <= _HEADER_LIMIT else shown[: _HEADER_LIMIT - 1] + "…"


def section_start_line(name: str, header: str, *, at: int, collapsed: bool = False) -> str:
    """The line that opens section `name` at unix time `at`, showing `header` (one line, no LF)."""
    options = "[collapsed=true]" if collapsed else ""
    marker = f"section_start:{max(int(at), 0)}:{section_name(name)}{options}"
    return f"{_ERASE_LINE}{marker}\r{_ERASE_LINE}{_header(header)}"


def section_end_line(name: str, *, at: int) -> str:
    """The line that closes section `name` at unix time `at`."""
    return f"{_ERASE_LINE}section_end:{max(int(at), 0)}:{section_name(name)}\r{_ERASE_LINE}"


def _print_marker(line: str) -> None:
    stream = sys.stdout
    if isinstance(stream, RedactingStream):
        stream.write_command(line)  # past the sanitiser, on a line of its own, still redacted
    else:
        stream.write(line + "\n")
    stream.flush()


@contextmanager
def log_section(
    name: str, header: str, *, collapsed: bool = False, clock: Callable[[], float] = time.time
) -> Iterator[None]:
    """Print what the block prints inside a GitLab section (closed even when the block raises)."""
    _print_marker(section_start_line(name, header, at=int(clock()), collapsed=collapsed))
    try:
        yield
    finally:
        _print_marker(section_end_line(name, at=int(clock())))
