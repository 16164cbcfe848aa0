"""Diagnostics: every problem found in user files, with code, location and hint."""

from __future__ import annotations

from typing import Literal

import msgspec
import msgspec.structs

from agentv_ci.model.source import SourceLocation
from agentv_ci.model.suite import Suite, Test

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
        from agentv_ci.text_safety import printable

        file = printable(self.file)
        where = file if self.line <= 0 else f"{file}:{self.line}:{self.col or 1}"
        text = f"{where}: {self.severity}[{self.code}]: {printable(self.message)}"
        if self.hint:
            text += f"\n  hint: {printable(self.hint)}"
        return text


def at_test(code: str, message: str, test: Test, suite: Suite, hint: str | None = None) -> Diagnostic:
    """A diagnostic where `test` was written (its suite's file when that is not known)."""
    from agentv_ci.validation.codes import severity_of

    where = test.location or SourceLocation(suite.path)
    return Diagnostic(severity_of(code), code, message, where.file, where.line, where.col, hint)


def sort_key(d: Diagnostic) -> tuple[str, int, int, str]:
    return (d.file, d.line, d.col, d.code)


def merge_repeated(
    diagnostics: list[Diagnostic], codes: frozenset[str] = frozenset({"E203"})
) -> list[Diagnostic]:
    """One diagnostic per distinct message of `codes` (a broken plugin is reported once): the first,
    in file order, with a hint listing where else it was used."""
    from agentv_ci.validation.output_formats import display_path

    first: dict[tuple[str, str], Diagnostic] = {}
    others: dict[tuple[str, str], list[str]] = {}
    kept: list[Diagnostic] = []
    for d in sorted(diagnostics, key=sort_key):
        key = (d.code, d.message)
        if d.code not in codes:
            kept.append(d)
        elif key not in first:
            first[key] = d
            others[key] = []
            kept.append(d)
        else:
            where = f"line {d.line}" if d.file == first[key].file else display_path(d.file)
            if d.file != first[key].file and d.line > 0:
                where += f":{d.line}:{d.col or 1}"
            others[key].append(where)
    out: list[Diagnostic] = []
    for d in kept:
        places = others.get((d.code, d.message)) if d.code in codes else None
        if places:
            shown = ", ".join(places[:5]) + (f" and {len(places) - 5} more" if len(places) > 5 else "")
            also = f"also used at {shown}"
            d = msgspec.structs.replace(d, hint=f"{d.hint}; {also}" if d.hint else also)
        out.append(d)
    return out
