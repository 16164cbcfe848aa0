"""Reuse of a grader normalisation across tests: the same pure grader mapping (a text assertion),
written in many tests, is resolved and checked once per load; each test still gets its own spec with
its own locations. Only mappings that normalised without any diagnostic are reused, so every
warning and error is still reported at each place it is written."""

from __future__ import annotations

from typing import Any

import msgspec

from agentv_ci.loading.context import Node
from agentv_ci.loading.grader_checks import LIST_VALUE_TYPES, VALUE_TYPES
from agentv_ci.loading.keys import GRADER_COMMON
from agentv_ci.model.suite import GraderSpec

# Graders whose normalisation reads no file and depends on the written mapping alone.
PURE_TYPES = VALUE_TYPES | LIST_VALUE_TYPES

# (written type, canonical type, name, common fields) of a mapping that normalised cleanly.
CleanGrader = tuple[str, str, str, dict[str, Any]]


def content_key(raw: dict[str, Any], node: Node) -> bytes | None:
    """The grader mapping as written (types kept apart, key order kept) and its directory, or None."""
    try:
        return msgspec.msgpack.encode((str(node.base_dir), raw))
    except (TypeError, ValueError, OverflowError):
        return None


def replay(clean: CleanGrader, raw: dict[str, Any], node: Node) -> GraderSpec:
    """The spec `normalise_one` builds for a pure grader that normalised cleanly, at this node."""
    written, kind, name, common = clean
    config: dict[str, Any] = {}
    locations = {}
    for key, value in raw.items():
        if key not in GRADER_COMMON:
            config[key] = value
            locations[key] = node.doc.locate((*node.path, key))
    return GraderSpec(
        type=kind,
        name=name,
        config=config,
        location=node.loc(),
        written_type=written if written != kind else None,
        config_locations=locations,
        **common,
    )
