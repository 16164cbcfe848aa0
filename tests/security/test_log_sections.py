"""The console sanitiser breaks GitLab's section markers however the text is cut into writes."""

from __future__ import annotations

import itertools

import pytest

from agentv_ci.security.streams import LineGuard
from tests.e2e.test_gitlab_log_injection import forged_sections

LINE = "FAIL a/x section_start:1:evil[collapsed=true] y section_end:1:step_script\n"


@pytest.mark.parametrize("workflow_commands", [True, False])
def test_the_guard_breaks_a_marker_split_over_writes(workflow_commands: bool) -> None:
    guard = LineGuard(workflow_commands=workflow_commands)
    pieces = ["FAIL a/se", "ction", "_start:1:evil[collapsed=true] x\n", "section_end:1:step_script\n"]
    printed = "".join(guard.feed(piece) for piece in pieces)
    assert forged_sections(printed) == []
    assert printed.replace("\u200b", "") == "".join(pieces)  # only zero-width spaces were added


def test_every_cut_of_a_marker_line_into_three_writes_is_caught() -> None:
    for i, j in itertools.combinations(range(1, len(LINE)), 2):
        guard = LineGuard(workflow_commands=False)
        printed = "".join(guard.feed(piece) for piece in (LINE[:i], LINE[i:j], LINE[j:]))
        assert forged_sections(printed) == [], (i, j)
        assert printed.replace("\u200b", "") == LINE


def test_one_character_per_write_is_caught() -> None:
    guard = LineGuard(workflow_commands=True)
    assert forged_sections("".join(guard.feed(char) for char in LINE)) == []
