"""Where something came from: file, line, column (1-based)."""

from __future__ import annotations

import msgspec


class SourceLocation(msgspec.Struct, frozen=True, omit_defaults=True):
    """A position in a user file. `line`/`col` are 1-based; 0 means "whole file"."""

    file: str
    line: int = 0
    col: int = 0

    def __str__(self) -> str:
        if self.line <= 0:
            return self.file
        return f"{self.file}:{self.line}:{self.col or 1}"
