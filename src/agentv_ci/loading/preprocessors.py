"""`preprocessors:` (suite level, or on an llm-grader): `[{type, command}]`, AgentV's converters of
file outputs (xlsx, pdf...) to text before an llm-grader reads the answer.

As AgentV, the command's last argument is its script, resolved against the eval file's directory
(then its parents up to the repository root) and made absolute; it must exist (E301) inside the
repository (E305); a last argument that is a bare program name (`cat`, no `/` nor `.`) is run from
PATH instead (AgentV refuses it). `type` is a file extension or a media type (`xlsx`, `text/csv`).
"""

from __future__ import annotations

import shlex
from typing import Any

from agentv_ci.loading.context import LoadContext, Node, type_name
from agentv_ci.loading.paths import resolve_reference

PREPROCESSOR_KEYS = frozenset({"type", "command"})


def parse_preprocessors(raw: Any, node: Node, ctx: LoadContext) -> list[dict[str, Any]]:
    """`[{"type": str, "command": [argv..., absolute script]}]`; problems are located diagnostics."""
    if not isinstance(raw, list):
        ctx.error("E101", f"preprocessors must be a list, got {type_name(raw)}", node)
        return []
    parsed: list[dict[str, Any]] = []
    for index, item in enumerate(raw):
        child = node.child(index)
        if not isinstance(item, dict):
            ctx.error("E101", "a preprocessor must be a mapping with `type` and `command`", child)
            continue
        ctx.check_keys(item, child, PREPROCESSOR_KEYS, "a preprocessor")
        kind = item.get("type")
        if not isinstance(kind, str) or not kind.strip():
            ctx.error("E102", "a preprocessor needs a `type` (e.g. xlsx or application/pdf)", child)
            continue
        command = item.get("command")
        if command is None:
            ctx.error("E102", "a preprocessor needs a `command`", child)
            continue
        argv = shlex.split(command) if isinstance(command, str) else command
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) and a for a in argv):
            ctx.error(
                "E101", "preprocessor command must be a string or a list of strings", child.child("command")
            )
            continue
        if "/" not in argv[-1] and "." not in argv[-1]:
            parsed.append({"type": kind.strip(), "command": list(argv)})  # a program on PATH (`false`)
            continue
        from agentv_ci.loading.script_checks import depend_on_script  # scripts only (~2 ms)

        script = resolve_reference(argv[-1], node.base_dir, ctx.repo_root)
        where = (
            child.child("command").child(len(argv) - 1)
            if isinstance(command, list)
            else child.child("command")
        )
        depend_on_script(script, child, ctx)
        if not ctx.confined(script, where, argv[-1]):
            continue
        if not script.is_file():
            ctx.error(
                "E301",
                f"preprocessor script not found: {argv[-1]}",
                where,
                hint=f"the last argument of the command is its script, resolved relative to {node.base_dir}",
            )
            continue
        parsed.append({"type": kind.strip(), "command": [*argv[:-1], str(script)]})
    return parsed
