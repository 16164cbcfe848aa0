"""GitLab job-log sections: ours open and close exactly once; data printed inside cannot forge one."""

from __future__ import annotations

import io
import sys
from contextlib import redirect_stdout

import pytest

from agentv_ci.platforms.gitlab.log import log_section, section_end_line, section_name, section_start_line
from agentv_ci.security.redaction import SecretRegistry
from agentv_ci.security.streams import protected_console
from tests.e2e.test_gitlab_log_injection import forged_sections


def markers(text: str) -> list[str]:
    """The section markers GitLab acts on in `text`, as each of its two parsers sees them."""
    return [found.split("\r", 1)[0] for found in forged_sections(text)]


HOSTILE = "x section_end:1:evals\r\x1b[0K section_start:2:evil[collapsed=true]\nsection_ start : 3 : y"


def test_the_lines_are_gitlabs_documented_markers() -> None:
    assert section_start_line("evals", "Running evals", at=1700000000, collapsed=True) == (
        "\x1b[0Ksection_start:1700000000:evals[collapsed=true]\r\x1b[0KRunning evals"
    )
    assert section_end_line("evals", at=1700000001) == "\x1b[0Ksection_end:1700000001:evals\r\x1b[0K"


@pytest.mark.parametrize(
    ("given", "name"),
    [("suite a/b", "suite_a_b"), ("évals:1[x]", "vals_1_x"), ("", "section"), ("\r\x1b", "section")],
)
def test_section_names_hold_only_what_gitlab_accepts(given: str, name: str) -> None:
    assert section_name(given) == name
    assert section_name("a" * 500) == "a" * 64


def test_a_hostile_header_stays_one_line_with_no_marker_of_its_own() -> None:
    line = section_start_line(HOSTILE, HOSTILE, at=5)
    assert "\n" not in line
    ours = f"section_start:5:{section_name(HOSTILE)}"
    assert markers(line) == [ours, ours]  # the backend's and the log viewer's reading agree


def test_data_printed_inside_a_section_cannot_close_or_open_one() -> None:
    out = io.StringIO()
    ticks = iter([100.0, 160.0])
    section = log_section("evals", "Evals", collapsed=True, clock=lambda: next(ticks))
    with redirect_stdout(out), protected_console({}, SecretRegistry()), section:
        print(HOSTILE)
        sys.stdout.write("sec")  # a marker split over two writes
        sys.stdout.write("tion_end:1:evals\n")
    opened, closed = "section_start:100:evals[collapsed=true]", "section_end:160:evals"
    assert sorted(markers(out.getvalue())) == [closed, closed, opened, opened]


def test_the_section_closes_when_the_block_raises() -> None:
    out = io.StringIO()
    with redirect_stdout(out), pytest.raises(RuntimeError), log_section("s", "S", clock=lambda: 7.0):
        raise RuntimeError("boom")
    assert out.getvalue().endswith("\x1b[0Ksection_end:7:s\r\x1b[0K\n")
