from __future__ import annotations

import re

from agentv_ci.gating import GateOptions, decide
from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.reporting.console import EXCERPT_CHARS, first_line_excerpt, render_console
from tests.reporting.golden import FAKE_REPO, assert_golden
from tests.reporting.sample_runs import HOSTILE, sample_summary


def test_console_matches_golden() -> None:
    summary = sample_summary(FAKE_REPO)
    assert_golden("console.txt", render_console(summary, decide(summary, GateOptions())) + "\n")


def test_verdict_is_the_result_line() -> None:
    summary = sample_summary(FAKE_REPO)
    text = render_console(summary, decide(summary, GateOptions()))
    assert "RESULT: FAILED: 2/6 tests passed (2 failed, 1 errored, 1 not run)" in text
    assert render_console(summary, None).count("RESULT:") == 0


def test_console_neutralises_workflow_commands_and_ansi() -> None:
    row = TestResult("t", "s", "m", 0.0, "execution_error", error="::error::pwned\n" + HOSTILE)
    text = render_console(RunSummary([row]), None)
    assert not re.search(r"^\s*::", text, re.MULTILINE)
    assert "\x1b" not in text


def test_console_breaks_legacy_and_cr_commands_in_names_and_errors() -> None:
    rows = [
        TestResult("t\r::add-mask::x", "s ##[stop-commands]tok", "m", 0.0, "quality_failure"),
        TestResult("e", "s", "m", 0.0, "execution_error", error="retrying ##[error]boom\r::error::x"),
    ]
    summary = RunSummary(rows)
    text = render_console(summary, decide(summary, GateOptions()))
    assert "##[" not in text
    assert not re.search(r"(^|\r)\s*::", text, re.MULTILINE)


def test_long_errors_are_shortened_at_a_word_boundary() -> None:
    words = "the agent exited with code 1 because the configured model refused the request " * 4
    row = TestResult("t", "s", "m", 0.0, "execution_error", error=words.strip() + "\nsecond line")
    line = next(x for x in render_console(RunSummary([row]), None).splitlines() if "ERROR" in x)
    shown = line.split("]: ", 1)[1]
    assert shown.endswith("...") and len(shown) <= EXCERPT_CHARS
    assert words.startswith(shown[:-3]) and words[len(shown) - 3] == " "  # cut between two words
    assert "second line" not in line


def test_excerpt_of_one_huge_token_is_still_bounded() -> None:
    assert first_line_excerpt("x" * 1000, 50) == "x" * 47 + "..."
    assert first_line_excerpt("short") == "short"
