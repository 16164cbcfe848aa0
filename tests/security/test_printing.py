"""The print sanitiser (security.streams, text_safety.printable): what reaches the console cannot be
a workflow command, a terminal sequence or an extra line, whatever the data and however it is split
into writes. Property tests generate the hostile text."""

from __future__ import annotations

import io
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentv_ci.security.redaction import SecretRegistry
from agentv_ci.security.streams import LineGuard, RedactingStream, print_workflow_command
from agentv_ci.text_safety import escape_controls, printable
from tests.properties import property_settings

ZWSP = "\u200b"
# Pieces an attacker would combine: line ends of every kind, commands, terminal sequences, padding.
FRAGMENTS = [
    "\n",
    "\r",
    "\r\n",
    ":",
    "::",
    "::add-mask::Paris",
    "::stop-commands::abc",
    "::error::forged",
    "##",
    "[",
    "##[error]x",
    " ",
    "\t",
    "\u3000",
    "\x1b[31m",
    "\x1b]0;title\x07",
    "\x1b]8;;https://evil.example\x1b\\",
    "\x07",
    "\x9b2J",
    "\x9d0;t\x9c",
    "\u2028",
    "\u202e",
    "%0A",
    "a",
    "é",
]
hostile = st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=8).map("".join)
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def runner_commands(text: str) -> list[str]:
    """The lines the Actions runner would parse as commands: `::` first after leading whitespace on
    a line (ended by LF or CR), or `##[` anywhere."""
    lines = re.split(r"\r\n|\r|\n", text)
    return [line for line in lines if line.lstrip().startswith("::") or "##[" in line]


@property_settings(300)
@given(chunks=st.lists(hostile, min_size=1, max_size=6))
def test_no_written_text_becomes_a_command_or_a_terminal_sequence(chunks: list[str]) -> None:
    guard = LineGuard(workflow_commands=True)
    out = "".join(guard.feed(chunk) for chunk in chunks)
    assert runner_commands(out) == []
    assert CONTROLS.search(out) is None
    # Nothing is lost: the sanitiser only escapes controls (per write: a CR ending one write is bare)
    # and inserts zero-width spaces.
    assert out.replace(ZWSP, "") == "".join(escape_controls(c) for c in chunks).replace(ZWSP, "")


@property_settings(300)
@given(value=hostile)
def test_a_printed_value_is_one_line_without_controls(value: str) -> None:
    shown = printable(value)
    assert len(shown.splitlines()) <= 1 and "\n" not in shown and "\r" not in shown
    assert CONTROLS.search(shown) is None and "\t" not in shown


def test_printable_escapes_visibly() -> None:
    assert printable("notes\n::add-mask::Paris\r\x1b]0;x\x07\t\u202e") == (
        "notes\\n::add-mask::Paris\\r\\x1b]0;x\\x07\\t\\u202e"
    )
    assert printable("plain é ✓") == "plain é ✓"
    assert escape_controls("a\r\nb\rc\td\n") == "a\nb\\rc\td\n"  # layout stays, a bare CR does not


@pytest.mark.parametrize(
    ("writes", "expected"),
    [
        (["::add-mask::x\n"], ":\u200b:add-mask::x\n"),
        (["  ::error::x\n"], "  :\u200b:error::x\n"),
        (["  ", "::error::x\n"], "  :\u200b:error::x\n"),
        ([":", ":error::x\n"], ":\u200b:error::x\n"),
        (["ok ", "::not-a-command\n"], "ok ::not-a-command\n"),
        (["x ##", "[error]y\n"], "x ##\u200b[error]y\n"),
        (["a\r::error::x\n"], "a\\r::error::x\n"),
    ],
)
def test_commands_split_over_writes_are_caught(writes: list[str], expected: str) -> None:
    guard = LineGuard(workflow_commands=True)
    assert "".join(guard.feed(w) for w in writes) == expected


def test_outside_github_actions_only_controls_are_escaped() -> None:
    guard = LineGuard(workflow_commands=False)
    assert guard.feed("::error::x\n\x1b[2Jy\x07\r\n") == "::error::x\n\\x1b[2Jy\\x07\n"


def test_our_own_commands_pass_on_a_line_of_their_own() -> None:
    inner = io.StringIO()
    registry = SecretRegistry()
    registry.add("s3cr3t-value-123")
    stream = RedactingStream(inner, registry, workflow_commands=True)
    stream.write("selected: ")  # a line left open
    stream.write_command("::notice title=agentv-ci::done s3cr3t-value-123")
    stream.write("::add-mask::forged\n")
    stream.write_mask("s3cr3t-value-123")
    assert inner.getvalue().splitlines() == [
        "selected: ",
        "::notice title=agentv-ci::done ***",
        ":\u200b:add-mask::forged",
        "::add-mask::s3cr3t-value-123",
    ]


def test_print_workflow_command_refuses_anything_but_one_command_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inner = io.StringIO()
    monkeypatch.setattr("sys.stdout", RedactingStream(inner, SecretRegistry(), workflow_commands=True))
    print_workflow_command("::warning title=t::x\x1b[1m")
    assert inner.getvalue() == "::warning title=t::x\\x1b[1m\n"
    for bad in ("::error::a\n::add-mask::b", "not a command", "::error::a\rb"):
        with pytest.raises(ValueError):
            print_workflow_command(bad)


def test_the_progress_bar_keeps_its_own_carriage_return() -> None:
    inner = io.StringIO()
    stream = RedactingStream(inner, SecretRegistry(), workflow_commands=False)
    stream.redraw("[###---] 1/2 \x1b[31m")
    stream.write("\r evil\n")
    assert inner.getvalue() == "\r[###---] 1/2 \\x1b[31m\\r evil\n"
