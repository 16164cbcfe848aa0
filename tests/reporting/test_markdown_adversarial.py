"""Hostile model text and hostile names against the Markdown summary's structure and size cap."""

from __future__ import annotations

import re

from agentv_ci.compare import compare_runs
from agentv_ci.gating import GateOptions, decide
from agentv_ci.model.result import AssertionResult, GraderResult, RunSummary, TestResult
from agentv_ci.reporting.markdown import MAX_CHARS, render_markdown
from tests.reporting.test_markdown import _outside_fences

# Each line tries a different way out of the report's structure.
EVIL = (
    "fine</details><details open><summary>pwned</summary>\n"
    "<script>alert(1)</script><img src=x onerror=y>\n"
    "@octocat @org/team please look\n"
    "::error file=a.py,line=1::injected\r::add-mask::x\r\n  ::stop-commands::tok\n"
    "mid-line ##[error]legacy ##[set-output name=x]y\n"
    "| col | col |\n"
    "`````\n~~~\n```python\n"
    "<!-- unclosed comment\n"
)
EVIL_NAME = "n|a</details>\n::error::x @bob `tick`"


def _summary(count: int, *, output: str = EVIL, input_text: str = EVIL) -> RunSummary:
    grader = GraderResult(
        "judge</details>",
        "llm-grader",
        0.0,
        "fail",
        assertions=[AssertionResult("polite @team </details>", False, EVIL)],
        error=EVIL,
    )
    rows = [
        TestResult(
            f"{EVIL_NAME}-{i}",
            f"suite|{i % 3}\n::warning::s",
            "model`x`",
            0.0,
            "quality_failure",
            scores=[grader],
            input=input_text,
            output=output,
        )
        for i in range(count)
    ]
    rows.append(TestResult("err", "errors", "m", 0.0, "execution_error", error=EVIL))
    selection = {"evals/a`b\n::error::x.yaml": "because </details> @alice\n::warning::y | z"}
    return RunSummary(rows, selection=selection)


def _render(summary: RunSummary, baseline: RunSummary | None = None) -> str:
    decision = decide(summary, GateOptions(), baseline)
    comparison = compare_runs(baseline.results, summary.results) if baseline else None
    return render_markdown(summary, decision, comparison=comparison)


def _assert_structure(text: str) -> None:
    prose = _outside_fences(text)  # also asserts every fence is closed
    # exactly one collapsible block, opened before it is closed; no other HTML outside code
    tags = re.findall(r"<(/?)([a-zA-Z]+)", prose)
    assert tags == [("", "details"), ("", "summary"), ("/", "summary"), ("/", "details")], tags
    assert "<!--" not in prose
    # no workflow command at any line start (LF or CR), no legacy command anywhere
    assert not re.search(r"(^|\r)\s*::", text, re.MULTILINE)
    assert "##[" not in text
    # no live mention anywhere, fences included
    assert not re.search(r"@[A-Za-z]", text)
    # table rows keep their column count: 8 columns -> 9 unescaped pipes
    rows = [line for line in prose.splitlines() if line.startswith("| ") and "Pass rate" not in line]
    for line in rows:  # suite table: 9 pipes; changes table: 7
        assert line.count("|") - line.count("\\|") in (9, 7), f"a table row lost its shape: {line!r}"


def test_hostile_text_cannot_break_the_summary_structure() -> None:
    text = _render(_summary(3))
    assert text.startswith("❌ **agentv-ci: FAILED")
    _assert_structure(text)


def test_selection_paths_cannot_start_lines_or_break_the_list() -> None:
    text = _render(_summary(1))
    section = text.split("#### Why these evals ran (1)\n\n", 1)[1].split("\n\n", 1)[0]
    assert section.count("\n") == 0, section  # one list item, one line
    assert "::error::x.yaml" in section  # shown, but not at a line start


def test_verdict_line_survives_enormous_test_ids() -> None:
    rows = [TestResult("x" * 30_000 + str(i), "s", "m", 0.0, "quality_failure") for i in range(5)]
    text = _render(RunSummary(rows))
    first = text.splitlines()[0]
    assert first.startswith("❌ **agentv-ci: FAILED: 0/5 tests passed (5 failed)")
    assert first.endswith("**") and len(first) < 2_000
    assert len(text) < MAX_CHARS


def test_fifty_thousand_tests_with_huge_outputs_stay_under_the_cap() -> None:
    huge = EVIL * 5_000  # ~1 MB of hostile answer per test (shared string: cheap to build)
    summary = _summary(50_000, output=huge, input_text=huge)
    baseline = RunSummary(
        [TestResult(r.test_id, r.suite, r.target, 1.0, "ok", verdict="pass") for r in summary.results]
    )
    text = _render(summary, baseline)
    assert len(text) < MAX_CHARS
    assert len(text.encode("utf-16-le")) // 2 < MAX_CHARS
    assert text.startswith("❌ **agentv-ci: FAILED: 0/50001 tests passed (50000 failed, 1 errored)")
    assert "more failing test(s) left out" in text or "of 50001 failing" in text
    _assert_structure(text)


def test_astral_characters_count_twice_toward_the_cap() -> None:
    # GitHub measures the body in UTF-16 code units (JavaScript/Ruby string limits): an emoji is 2.
    emoji = "\U0001f600" * 20_000
    rows = [
        TestResult(f"t{i}", "s", "m", 0.0, "quality_failure", output=emoji, input=emoji) for i in range(200)
    ]
    text = _render(RunSummary(rows))
    assert len(text.encode("utf-16-le")) // 2 < MAX_CHARS


def test_no_raw_html_tag_survives_even_inside_code_fences() -> None:
    # A fence shows HTML literally on GitHub, but the same body goes to mail notifications, Slack
    # unfurls and other renderers: no `<tag`, `</tag`, `<!` or `<?` opens anywhere.
    text = _render(_summary(3))
    assert "alert(1)" in text  # the model text is still shown
    opened = re.findall(r"<(/?)([A-Za-z!?][^\s>]*)", text)
    assert opened == [("", "details"), ("", "summary"), ("/", "summary"), ("/", "details")], opened
