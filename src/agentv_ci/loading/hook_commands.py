"""E501 for workspace hook commands that would let data run as code (security/hook_commands.py)."""

from __future__ import annotations

from agentv_ci.loading.context import LoadContext, Node


def check_hook_command(command: list[str] | str, node: Node, ctx: LoadContext) -> None:
    """E501 at the command (at the argv element for a list) for each data placeholder it puts
    inside quotes, a nested shell or other code: `run` refuses the file before anything runs."""
    # Here, not at the top: the shell-word scanner (~3 ms to import) only for files with hooks.
    from agentv_ci.security.hook_commands import command_problems

    for index, message, hint in command_problems(command):
        ctx.error("E501", message, node if index < 0 else node.child(index), hint=hint)
