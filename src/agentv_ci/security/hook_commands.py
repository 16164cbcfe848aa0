"""Workspace hook commands: where their data placeholders could run as code.

`{{test_id}}`, `{{eval_run_id}}`, `{{case_input}}` and `{{case_metadata}}` carry data; in a string
command (run by `sh -c`) and in the code string of a shell an argv starts (`["bash", "-c", "..."]`)
each becomes a `"$AGENTV_..."` expansion (security/shell_values.py), so it must stand in a plain word
there; in another interpreter's code (`["python3", "-c", "..."]`) it has no safe place at all.
`{{workspace_path}}` is made by the runner and may stand anywhere. Used by the loader (`validate`:
E501) and the runner (running/hooks.py refuses such a command).
"""

from __future__ import annotations

import re

from agentv_ci.security.nested_programs import Program, code_arguments
from agentv_ci.security.shell_values import Template

PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")
# The data a hook's placeholders carry, and the variable each one's value is in for a shell.
DATA_VARIABLES = {
    "test_id": "AGENTV_TEST_ID",
    "eval_run_id": "AGENTV_EVAL_RUN_ID",
    "case_input": "AGENTV_CASE_INPUT",
    "case_metadata": "AGENTV_CASE_METADATA",
}
HOOK_COMMAND = Template(
    PLACEHOLDER, data=frozenset(DATA_VARIABLES), runner=frozenset({"workspace_path"}), shown="{{%s}}"
)


def code_strings(command: list[str] | str) -> dict[int, Program]:
    """The parts of `command` that run as code (-1: a string command, else argv indexes) and the
    program that runs each: a shell, or another interpreter (`python -c`)."""
    if isinstance(command, str):
        return {-1: Program("sh", "-c")}
    return code_arguments([str(a) for a in command])


def command_problems(command: list[str] | str) -> list[tuple[int, str, str]]:
    """Each data placeholder of `command` that could run as code: (argv index or -1, message,
    hint). `validate` reports them (E501) and `run_hook` refuses to run such a command."""
    problems: list[tuple[int, str, str]] = []
    for index, program in code_strings(command).items():
        text = command if isinstance(command, str) else str(command[index])
        if program.is_shell:
            found = HOOK_COMMAND.problems(text)
        else:  # another language's code: a value has no safe place in it
            found = HOOK_COMMAND.placeholders(text, data_only=True)
            for placeholder in found:
                placeholder.where = f"inside the code string of a nested {program}"
        for placeholder in found:
            message, hint = HOOK_COMMAND.describe(placeholder, file_hint="the JSON the hook gets on stdin")
            problems.append((index, message, hint))
    return problems
