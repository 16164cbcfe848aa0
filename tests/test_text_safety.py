from __future__ import annotations

import xml.etree.ElementTree as ET

from agentv_ci.text_safety import (
    clean_text,
    escape_markdown_inline,
    fenced_block,
    neutralise_workflow_commands,
)


def test_clean_text_makes_any_string_xml_safe() -> None:
    dirty = "a\x1b[1;31mb\x1b[0m\ud83d\x00\x0b\x7f\ufffe c\td\n"
    cleaned = clean_text(dirty)
    assert cleaned == "ab? c\td\n"
    ET.fromstring(f"<x>{cleaned}</x>")


def test_workflow_commands_are_broken_on_every_line() -> None:
    text = neutralise_workflow_commands("ok\n::error::x\n  ::add-mask::y\n%3A:not\nmid ::line")
    assert "\n::" not in text and "  ::" not in text
    assert text.endswith("mid ::line")  # only line starts are commands


def test_markdown_inline_escaping() -> None:
    text = escape_markdown_inline("<img src=x onerror=1> @alice | *b* [l](u)\n::warning::w")
    assert "<" not in text and "@alice" not in text
    assert "\\|" in text and "\\*b\\*" in text and "\\[l\\]" in text
    assert "\n" not in text


def test_fence_is_longer_than_any_backtick_run() -> None:
    block = fenced_block("a ```` b\n```\n@bob")
    assert block.startswith("`````text\n") and block.endswith("\n`````")
    assert "@bob" not in block


def test_legacy_hash_commands_are_broken_anywhere_in_a_line() -> None:
    # The Actions runner still parses the legacy `##[command]data` form with IndexOf (anywhere in a
    # line), e.g. `##[stop-commands]tok` would switch off command processing for the rest of the step.
    text = neutralise_workflow_commands("answer: ##[error]boom and ##[stop-commands]tok")
    assert "##[" not in text
    assert text.replace("\u200b", "") == "answer: ##[error]boom and ##[stop-commands]tok"


def test_a_carriage_return_starts_a_line_for_the_runner() -> None:
    # .NET ReadLine (the runner's log reader) ends a line at a lone CR too.
    text = neutralise_workflow_commands("progress 50%\r::error::x\r  ::add-mask::y")
    assert "\r::" not in text and "\r  ::" not in text
    assert text.replace("\u200b", "") == "progress 50%\r::error::x\r  ::add-mask::y"


def test_markdown_helpers_break_legacy_commands_and_cr_lines() -> None:
    assert "##[" not in escape_markdown_inline("x ##[warning]y")
    block = fenced_block("a\r::error::b ##[error]c")
    assert "\r::" not in block and "##[" not in block
