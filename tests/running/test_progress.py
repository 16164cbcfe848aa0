from __future__ import annotations

import io

import pytest

from agentv_ci.model.result import AssertionResult, GraderResult, TestResult
from agentv_ci.running.budget import Budget
from agentv_ci.running.progress import Progress, format_clock, result_line


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    """A clock the test moves by hand: no sleeping."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _result(status: str, **extra: object) -> TestResult:
    return TestResult(test_id="t", suite="s", target="x", score=0.5, execution_status=status, **extra)  # type: ignore[arg-type]


def _failed(answer: str = "14 days") -> TestResult:
    check = AssertionResult("Output contains", False, expected='"30 days"', actual=f'"{answer}"')
    grader = GraderResult(name="refund", type="contains", score=0.0, verdict="fail", assertions=[check])
    return _result("quality_failure", duration_ms=12.0, scores=[grader], output=answer)


def test_ci_prints_failures_and_errors_in_full_and_no_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    stream = Terminal()
    progress = Progress(3, stream=stream, clock=Clock())
    progress.update(_failed())
    progress.update(_result("ok"))
    progress.update(_result("execution_error", error="boom\nmore"))
    progress.finish()
    lines = stream.getvalue().splitlines()
    assert [line for line in lines if not line.startswith("progress:")] == [
        "FAIL    s/t [x] score=0.50 12ms",
        '    x refund: expected "30 days", got "14 days"',
        "ERROR   s/t [x] score=0.50 - boom",
    ]


def test_a_plain_line_every_tenth_or_30_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    clock, piped = Clock(), io.StringIO()
    budget = Budget(None)
    progress = Progress(100, stream=piped, clock=clock, budget=budget)
    for _ in range(25):
        clock.now += 0.5
        budget.add(0.01)
        progress.update(_result("ok"))
    lines = piped.getvalue().splitlines()
    assert len(lines) == 2  # at 10% and 20%
    assert lines[1] == (
        "progress: 20/100 (20%) pass 20 fail 0 error 0; elapsed 0:10, 2.0 tests/s, ETA 0:40, spent $0.2000"
    )
    clock.now += 31  # a slow test: a line after 30 s whatever the share done
    progress.update(_result("ok"))
    assert piped.getvalue().splitlines()[-1].startswith("progress: 26/100 (26%)")
    for _ in range(74):
        progress.update(_result("ok"))
    progress.finish()
    lines = piped.getvalue().splitlines()
    assert len(lines) == 11 and lines[-1].startswith("progress: 100/100 (100%)") and "ETA 0:00" in lines[-1]


def test_the_bar_shows_elapsed_rate_eta_and_spend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    clock, stream = Clock(), Terminal()
    budget = Budget(None)
    budget.add(0.5)
    progress = Progress(4, stream=stream, clock=clock, budget=budget)
    clock.now += 2
    progress.update(_result("ok"))
    assert stream.getvalue().endswith(
        "[#######-----------------------] 1/4 pass 1 fail 0 error 0 | elapsed 0:02, 0.5 tests/s, ETA 0:06, "
        "spent $0.5000"
    )
    width = len(stream.getvalue()) - 1
    progress.update(_failed())  # the bar overwritten by the block (padded), then drawn below it
    text = stream.getvalue()
    first = "FAIL    s/t [x] score=0.50 12ms".ljust(width)
    assert f'\r{first}\n    x refund: expected "30 days", got "14 days"\n\r[' in text
    assert text.count("\r") == 3  # the bar, the line over it, the bar again: no other CR
    progress.update(_result("ok"))
    progress.update(_result("not_run"))
    progress.finish()
    text = stream.getvalue()
    assert "4/4 pass 2 fail 1 error 0" in text and text.endswith("\n")
    assert progress.counts["not_run"] == 1


def test_verbose_quiet_and_dry_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    verbose = io.StringIO()
    Progress(1, stream=verbose, verbose=True, clock=Clock()).update(_result("ok"))
    assert verbose.getvalue().splitlines()[0] == "PASS    s/t [x] score=0.50"
    loud = io.StringIO()
    Progress(1, stream=loud, verbose=True, clock=Clock()).update(_failed("a" * 5000))
    assert "    answer: aaa" in loud.getvalue() and len(loud.getvalue()) < 2000  # capped
    silent = io.StringIO()
    Progress(1, stream=silent, quiet=True).update(_failed())
    assert silent.getvalue() == ""
    dry = io.StringIO()
    progress = Progress(2, stream=dry, clock=Clock())
    progress.update(_dry())
    progress.update(_dry())
    assert "FAIL" not in dry.getvalue() and "placeholder 2 error 0" in dry.getvalue()
    assert result_line(_dry()) == "DRY RUN s/t [x]: placeholder answer, score not gated"
    assert result_line(_result("not_run")).startswith("NOT RUN")


def _dry() -> TestResult:
    return _result("quality_failure", dry_run=True)


def test_format_clock() -> None:
    assert [format_clock(s) for s in (0, 59.9, 61, 3600 * 2 + 5)] == ["0:00", "0:59", "1:01", "2:00:05"]
