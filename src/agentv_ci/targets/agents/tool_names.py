"""Tool names as AgentV 4.42.4 reports them, so one `tool-trajectory` grader fits every agent.

AgentV maps each agent's own names for the common tools to Claude Code's (`Read`, `Write`, `Edit`,
`Bash`, `Skill`) and adds `file_path` to a read's arguments when the agent called it `path`. Any
other name is kept as the agent wrote it. (Our table; the mapping is AgentV's, from
`providers/normalize-tool-call.ts`.)

Beyond AgentV, so that one grader fits every agent with the real CLIs (Copilot CLI 1.0.102 titles
its calls by what they do; pi 0.74 names its file tools in lower case): Copilot's `Running: CMD` is
`Bash`, `Editing PATH` is `Edit`, `Creating PATH` is `Write`; pi's `edit` and `write` are `Edit`
and `Write`. AgentV keeps those names as the agents wrote them.
"""

from __future__ import annotations

from typing import Any

_COPILOT = {
    "Skill": "Skill",
    "skill": "Skill",
    "Read File": "Read",
    "readFile": "Read",
    "Read": "Read",
    "readTextFile": "Read",
    "writeTextFile": "Write",
    "Write File": "Write",
    "editFile": "Edit",
    "Edit File": "Edit",
    "runTerminalCommand": "Bash",
}
_EXACT: dict[str, dict[str, str]] = {
    "copilot": _COPILOT,
    "codex": {"command_execution": "Bash", "file_change": "Edit"},
    "pi": {"read": "Read", "bash": "Bash", "edit": "Edit", "write": "Write"},
}
# (prefix, canonical name, whether the rest of the name is the skill)
_PREFIXES: dict[str, tuple[tuple[str, str, bool], ...]] = {
    "copilot": (
        ("Using skill: ", "Skill", True),
        ("Viewing ", "Read", False),
        ("Running: ", "Bash", False),
        ("Editing ", "Edit", False),
        ("Creating ", "Write", False),
    ),
    "codex": (("mcp:", "Skill", True),),
}


def canonical_tool(family: str, name: str, arguments: Any) -> tuple[str, Any]:
    """`(name, arguments)` as AgentV reports a tool call of agent `family` (claude, codex, copilot, pi)."""
    canonical = _EXACT.get(family, {}).get(name)
    if canonical is None:
        for prefix, mapped, names_skill in _PREFIXES.get(family, ()):
            if name.startswith(prefix):
                canonical = mapped
                rest = name[len(prefix) :]
                if names_skill and rest:
                    arguments = {**(arguments if isinstance(arguments, dict) else {}), "skill": rest}
                break
    if canonical is None:
        return name, arguments
    if canonical == "Read" and isinstance(arguments, dict) and "file_path" not in arguments:
        for alias in ("path", "filePath"):
            if alias in arguments:
                arguments = {**arguments, "file_path": arguments[alias]}
                break
    return canonical, arguments
