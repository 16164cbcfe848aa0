"""E105: two tests of one suite with the same id."""

from __future__ import annotations

import os
from pathlib import Path

from agentv_ci.loading.context import LoadContext, Node
from agentv_ci.model.source import SourceLocation
from agentv_ci.model.suite import Test

# A test built, and where its id was written.
Built = tuple[Test, "Node | SourceLocation"]


def check_duplicate_ids(built: list[Built], ctx: LoadContext) -> None:
    """E105 for every test whose suite and id repeat an earlier test's (naming where that one is)."""
    seen: dict[str, Node | SourceLocation] = {}
    for test, where in built:
        key = f"{test.suite}\x00{test.id}"
        if key in seen:
            first, here = _location(seen[key]), _location(where)
            if first.file == here.file:
                previous = f"line {first.line}"
            else:
                rel = os.path.relpath(first.file, Path(here.file).parent)
                previous = f"{rel}:{first.line}:{first.col}"
            ctx.report(
                "E105",
                f"duplicate test id {test.id!r} (first at {previous})",
                here,
                "test ids must be unique within a suite",
            )
        else:
            seen[key] = where


def _location(where: Node | SourceLocation) -> SourceLocation:
    return where.loc() if isinstance(where, Node) else where
