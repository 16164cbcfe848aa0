"""The long functions the review of issue 30 named stay split into named stages.

Each one was a single body of 50 to 160 lines (or a list of 11 positional parameters) that a reader
had to hold whole. The bodies are measured from the first statement to the last, so a command's
typer options (its signature) do not count; what counts is the work the function does itself.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "agentv_ci"
MAX_BODY_LINES = 50  # about a screenful: a reader sees the stages in order without scrolling
MAX_POSITIONAL = 4

# (module, function): the functions issue 30's review named. `commands/run.py::run_command` is not here:
# its body is named stages (_check_flags, _what_to_run, _run_request, _execute, the post-run, _exit_code)
# handed its ~40 typer flags one per line, which no split shortens.
NAMED = [
    ("loading/tests_builder.py", "TestBuilder._build"),
    ("loading/workspace.py", "parse_workspace"),
    ("commands/report.py", "report_command"),
    ("github/comment.py", "post_sticky_comment"),
    ("running/session.py", "_run_planned"),
]


def _function(module: str, qualname: str) -> ast.FunctionDef:
    tree = ast.parse((SRC / module).read_text(encoding="utf-8"))
    scope: list[ast.stmt] = tree.body
    *outer, name = qualname.split(".")
    for cls in outer:
        scope = next(n for n in scope if isinstance(n, ast.ClassDef) and n.name == cls).body
    return next(n for n in scope if isinstance(n, ast.FunctionDef) and n.name == name)


def _body_lines(func: ast.FunctionDef) -> int:
    end = func.body[-1].end_lineno or func.body[-1].lineno
    return end - func.body[0].lineno + 1


@pytest.mark.parametrize(("module", "qualname"), NAMED)
def test_named_function_is_split_into_stages(module: str, qualname: str) -> None:
    lines = _body_lines(_function(module, qualname))
    assert lines <= MAX_BODY_LINES, f"{module}::{qualname} has a {lines}-line body"


def test_no_long_positional_parameter_lists_in_the_comment_upsert() -> None:
    tree = ast.parse((SRC / "github/comment.py").read_text(encoding="utf-8"))
    long = [
        f"{node.name} ({len(node.args.posonlyargs) + len(node.args.args)})"
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef)
        and len(node.args.posonlyargs) + len(node.args.args) > MAX_POSITIONAL
    ]
    assert not long, f"positional parameter lists too long: {long}"
