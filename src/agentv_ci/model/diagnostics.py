"""Diagnostics: every problem found in user files, with code, location and hint.

A value that loading, validation, running and the reporters all pass around, so it lives here on the
floor they share (docs/architecture.md); the codes are in model/codes.py, docs/diagnostics.md."""

from __future__ import annotations

from typing import Literal

import msgspec

from agentv_ci.text_safety import printable

Severity = Literal["error", "warning"]


class Diagnostic(msgspec.Struct, frozen=True, omit_defaults=True):
    """One problem. `code` is a stable identifier (e.g. `E101`, `W201`) documented in docs/diagnostics.md."""

    severity: Severity
    code: str
    message: str
    file: str
    line: int = 0
    col: int = 0
    hint: str | None = None

    def render(self) -> str:
        """`file:line:col: severity[CODE]: message` and an indented hint line. The message and hint
        quote user data (YAML keys, names, paths): each is shown on one line, controls escaped."""
        file = printable(self.file)
        where = file if self.line <= 0 else f"{file}:{self.line}:{self.col or 1}"
        text = f"{where}: {self.severity}[{self.code}]: {printable(self.message)}"
        if self.hint:
            text += f"\n  hint: {printable(self.hint)}"
        return text


def sort_key(d: Diagnostic) -> tuple[str, int, int, str]:
    return (d.file, d.line, d.col, d.code)
