"""Escaping for the parts of a workflow command, as @actions/core does (`escapeData`,
`escapeProperty`). A light module: `validate --format github` and the annotations both use it.

Commands are printed with security.streams.print_workflow_command, the one way a line starting with
`::` reaches our output under GitHub Actions (everything else printed is neutralised).
"""

from __future__ import annotations

__all__ = ["escape_data", "escape_property"]


def escape_data(text: str) -> str:
    """@actions/core `escapeData`: `%`, CR and LF percent-encoded."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """@actions/core `escapeProperty`: `escapeData` plus `:` and `,`."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")
