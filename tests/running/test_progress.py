from __future__ import annotations

import io

import pytest

from agentv_ci.model.result import TestResult
from agentv_ci.running.progress import Progress, result_line


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _result(status: str, **extra: object) -> TestResult:
    return TestResult(test_id="t", suite="s", target="x", score=0.5, execution_status=status, **extra)  # type: ignore[arg-type]


def test_plain_lines_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    stream = Terminal()
    progress = Progress(2, stream=stream)
    progress.update(_result("quality_failure", duration_ms=12.0))
    progress.update(_result("execution_error", error="boom\nmore"))
    progress.finish()
    assert stream.getvalue().splitlines() == [
        "FAIL    s/t [x] score=0.50 12ms",
        "ERROR   s/t [x] score=0.50 - boom",
    ]


def test_bar_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    stream = Terminal()
    progress = Progress(2, stream=stream)
    progress.update(_result("ok"))
    progress.update(_result("not_run"))
    progress.finish()
    text = stream.getvalue()
    assert text.startswith("\r[") and "2/2 pass 1 fail 0 error 0" in text and text.endswith("\n")
    assert progress.counts["not_run"] == 1


def test_piped_output_is_plain_and_quiet_is_silent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    piped = io.StringIO()
    Progress(1, stream=piped).update(_result("ok"))
    assert piped.getvalue() == "PASS    s/t [x] score=0.50\n"
    silent = io.StringIO()
    Progress(1, stream=silent, quiet=True).update(_result("ok"))
    assert silent.getvalue() == ""
    assert result_line(_result("not_run")).startswith("NOT RUN")
