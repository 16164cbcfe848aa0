"""Diagnostics: every problem found in user files, with code, location and hint."""

from __future__ import annotations

from typing import Literal

import msgspec

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
        where = self.file if self.line <= 0 else f"{self.file}:{self.line}:{self.col or 1}"
        text = f"{where}: {self.severity}[{self.code}]: {self.message}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


def sort_key(d: Diagnostic) -> tuple[str, int, int, str]:
    return (d.file, d.line, d.col, d.code)
