"""`SuiteDefaults`: what a suite contributes to each of its tests, and how its metadata merges."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentv_ci.loading.context import Node
from agentv_ci.model.suite import ExecutionSpec, GraderSpec, Message


@dataclass
class SuiteDefaults:
    """What a suite contributes to each of its tests."""

    name: str
    input_raw: Any = None
    input_node: Node | None = None
    input_messages: list[Message] = field(default_factory=list)
    input_files: list[tuple[str, Path]] | None = None
    graders: list[GraderSpec] = field(default_factory=list)
    execution: ExecutionSpec = field(default_factory=ExecutionSpec)
    metadata: dict[str, Any] = field(default_factory=dict)
    workspace: dict[str, Any] | None = None
    preprocessors: list[dict[str, Any]] = field(default_factory=list)
    prompt_md: Path | None = None
    graders_written: bool = False  # the suite wrote assertions (even if they failed to load)


def merge_metadata(suite: dict[str, Any], test: dict[str, Any]) -> dict[str, Any]:
    """Suite metadata inherited; arrays concatenated (suite first, de-duplicated); test scalars win."""
    if not suite:
        return test
    merged = dict(suite)
    for key, value in test.items():
        base = merged.get(key)
        if isinstance(base, list) and isinstance(value, list):
            merged[key] = base + [v for v in value if v not in base]
        else:
            merged[key] = value
    return merged
