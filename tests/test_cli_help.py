"""What `--help` shows a first-time user: words for placeholders, ranges, the exit codes."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from agentv_ci.cli import app

COMMANDS = ("validate", "schema", "run", "grade", "merge", "report", "compare", "plugins", "discover")
PYTHON_TYPE = re.compile(r"<(?:list\[)?[A-Za-z]+\]?(?: range)?>")


def _help(*args: str) -> str:
    result = CliRunner().invoke(app, [*args, "--help"], terminal_width=100)
    assert result.exit_code == 0, result.output
    return result.output


def _option_block(text: str, option: str) -> str:
    """The help lines of `option`: its own line and the continuation lines under it."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith(option + " "))
    block = [lines[start]]
    for line in lines[start + 1 :]:
        if line.lstrip().startswith("-") or not line.strip():
            break
        block.append(line)
    return " ".join(block)


@pytest.mark.parametrize("command", COMMANDS)
def test_no_help_shows_a_python_type_placeholder(command: str) -> None:
    text = _help(command)
    assert not PYTHON_TYPE.search(text), PYTHON_TYPE.findall(text)


def test_run_help_names_values_and_shows_threshold_ranges() -> None:
    text = _help("run")
    for shown in ("-o, --output DIR", "--target NAME", "--workers N", "--timeout SECONDS", "--shard I/N"):
        assert shown in text
    for gate in ("--threshold", "--min-pass-rate", "--min-mean-score", "--max-regression"):
        assert "[0.0<=x<=1.0]" in _option_block(text, gate), gate
    assert "asyncio" not in text and "bounded workers" not in text  # the summary is for users


@pytest.mark.parametrize("args", [(), ("run",)])
def test_exit_codes_are_listed_in_help(args: tuple[str, ...]) -> None:
    text = _help(*args)
    assert "Exit codes:" in text
    for code in ("0", "1", "2", "3", "4", "130"):
        assert re.search(rf"^\s+{code}\s+\S", text, re.MULTILINE), code
