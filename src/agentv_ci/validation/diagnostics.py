"""Diagnostics placed on a test, and repeated ones merged (the `Diagnostic` value is in model/)."""

from __future__ import annotations

import msgspec.structs

from agentv_ci.loading.paths import display_path
from agentv_ci.model.codes import severity_of
from agentv_ci.model.diagnostics import Diagnostic, sort_key
from agentv_ci.model.source import SourceLocation
from agentv_ci.model.suite import Suite, Test


def at_test(code: str, message: str, test: Test, suite: Suite, hint: str | None = None) -> Diagnostic:
    """A diagnostic where `test` was written (its suite's file when that is not known)."""
    where = test.location or SourceLocation(suite.path)
    return Diagnostic(severity_of(code), code, message, where.file, where.line, where.col, hint)


def merge_repeated(
    diagnostics: list[Diagnostic], codes: frozenset[str] = frozenset({"E203"})
) -> list[Diagnostic]:
    """One diagnostic per distinct message of `codes` (a broken plugin is reported once): the first,
    in file order, with a hint listing where else it was used."""
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
