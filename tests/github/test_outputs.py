from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from agentv_ci.gating import GateOptions, decide
from agentv_ci.github.outputs import output_text, run_outputs, write_outputs
from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.reporting.console import render_console
from tests.reporting.golden import FAKE_REPO
from tests.reporting.sample_runs import sample_summary


def parse_github_output(text: str) -> dict[str, str]:
    """Read `$GITHUB_OUTPUT` as the Actions runner does: `name=value` lines and `name<<DELIM` blocks
    that end at the first line equal to DELIM. A block that never ends is an error."""
    lines = text.split("\n")
    assert lines[-1] == "", "the file must end with a newline"
    values: dict[str, str] = {}
    index = 0
    while index < len(lines) - 1:
        line = lines[index]
        heredoc, equals = line.find("<<"), line.find("=")
        if heredoc >= 0 and (equals < 0 or heredoc < equals):
            name, delimiter = line[:heredoc], line[heredoc + 2 :]
            end = lines.index(delimiter, index + 1)  # ValueError: the block never ends
            values[name] = "\n".join(lines[index + 1 : end])
            index = end + 1
        else:
            name, value = line.split("=", 1)
            values[name] = value
            index += 1
    return values


def test_outside_actions_nothing_is_written(tmp_path: Path) -> None:
    assert write_outputs({"verdict": "passed"}, env={}) is None
    assert write_outputs({"verdict": "passed"}, env={"GITHUB_OUTPUT": ""}) is None
    assert list(tmp_path.iterdir()) == []


def test_values_are_appended_as_heredoc_blocks_and_read_back(tmp_path: Path) -> None:
    target = tmp_path / "github_output"
    target.write_text("earlier=step\n", encoding="utf-8")
    tricky = "line one\nghadelimiter_00000000-0000-0000-0000-000000000000\nEOF\nother<<EOF\nlast line"
    written = write_outputs(
        {
            "pass_rate": 5 / 6,
            "mean_score": 1.0,
            "tiny": -0.00001,
            "passed": 5,
            "dry-run": False,
            "green": True,
            "comment_url": None,
            "answer": tricky,
            "empty": "",
        },
        env={"GITHUB_OUTPUT": str(target)},
    )
    assert written == target
    text = target.read_text(encoding="utf-8")
    assert text.startswith("earlier=step\n")  # appended, never overwritten
    assert parse_github_output(text) == {
        "earlier": "step",
        "pass_rate": "0.8333",
        "mean_score": "1",
        "tiny": "0",
        "passed": "5",
        "dry-run": "false",
        "green": "true",
        "comment_url": "",
        "answer": tricky,
        "empty": "",
    }
    delimiters = [line.split("<<", 1)[1] for line in text.splitlines() if "<<ghadelimiter_" in line]
    assert len(delimiters) == 9 and len(set(delimiters)) == 9  # a fresh random delimiter per block


def test_a_delimiter_found_in_the_value_is_drawn_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken, fresh = uuid.UUID(int=1), uuid.UUID(int=2)
    draws = iter([taken, fresh])
    monkeypatch.setattr(uuid, "uuid4", lambda: next(draws))
    target = tmp_path / "out"
    value = f"first\nghadelimiter_{taken}\nset=evil"
    write_outputs({"answer": value}, env={"GITHUB_OUTPUT": str(target)})
    text = target.read_text(encoding="utf-8")
    assert text.startswith(f"answer<<ghadelimiter_{fresh}\n")
    assert parse_github_output(text) == {"answer": value}


def test_invalid_output_names_are_refused_before_writing(tmp_path: Path) -> None:
    target = tmp_path / "out"
    for name in ("", "1st", "has space", "a=b", "a<<b", "new\nline", "ünï"):
        with pytest.raises(ValueError, match="invalid output name"):
            write_outputs({"ok": 1, name: 2}, env={"GITHUB_OUTPUT": str(target)})
    assert not target.exists()
    assert write_outputs({"_private": 1, "with-dash_2": 2}, env={"GITHUB_OUTPUT": str(target)}) == target


def test_an_unwritable_output_file_is_none_not_an_exception(tmp_path: Path) -> None:
    assert write_outputs({"a": 1}, env={"GITHUB_OUTPUT": str(tmp_path)}) is None  # a directory
    assert write_outputs({"a": 1}, env={"GITHUB_OUTPUT": str(tmp_path / "missing" / "out")}) is None


def test_model_text_with_a_lone_surrogate_is_written(tmp_path: Path) -> None:
    target = tmp_path / "out"
    assert write_outputs({"answer": "bad \ud83d half"}, env={"GITHUB_OUTPUT": str(target)}) == target
    assert parse_github_output(target.read_text(encoding="utf-8")) == {"answer": "bad ? half"}


def test_output_text_formats_floats_sensibly() -> None:
    assert [output_text(v) for v in (0.5, 2 / 3, 0.0, 10.0, float("nan"), 3, None)] == [
        "0.5", "0.6667", "0", "10", "", "3", "",
    ]  # fmt: skip
    assert output_text(0.000123, digits=6) == "0.000123"


def test_run_outputs_are_the_gate_totals(tmp_path: Path) -> None:
    summary = sample_summary(FAKE_REPO)
    decision = decide(summary, GateOptions())
    outputs = run_outputs(
        summary,
        decision,
        results_path=Path(".agentv-ci/results/index.jsonl"),
        junit_path=".agentv-ci/results/junit.xml",
        sarif_path=None,
        comment_url="https://github.com/o/r/pull/1#issuecomment-9",
    )
    assert outputs == {
        "verdict": "failed",
        "verdict_text": decision.verdict,
        "tests": "6",
        "passed": "2",
        "failed": "2",
        "errors": "1",
        "not_run": "1",
        "pass_rate": "0.5",
        "mean_score": "0.7125",
        "cost_usd": "0.0052",
        "results_path": ".agentv-ci/results/index.jsonl",
        "junit_path": ".agentv-ci/results/junit.xml",
        "sarif_path": "",
        "comment_url": "https://github.com/o/r/pull/1#issuecomment-9",
        "html_path": "",
    }
    assert "FAILED: " + outputs["passed"] + "/" + outputs["tests"] in render_console(summary, decision)
    target = tmp_path / "out"
    write_outputs(outputs, env={"GITHUB_OUTPUT": str(target)})
    assert parse_github_output(target.read_text(encoding="utf-8")) == outputs


def test_run_outputs_of_a_green_run_and_of_nothing_conclusive() -> None:
    green = RunSummary([TestResult("a", "s", "m", 1.0, "ok", verdict="pass")])
    outputs = run_outputs(
        green,
        decide(green, GateOptions()),
        results_path=None,
        junit_path=None,
        sarif_path=None,
        comment_url=None,
    )
    assert (outputs["verdict"], outputs["pass_rate"], outputs["cost_usd"]) == ("passed", "1", "")
    errored = RunSummary([TestResult("a", "s", "m", 0.0, "execution_error", error="boom")])
    outputs = run_outputs(
        errored,
        decide(errored, GateOptions()),
        results_path=None,
        junit_path=None,
        sarif_path=None,
        comment_url=None,
    )
    assert (outputs["verdict"], outputs["errors"], outputs["pass_rate"], outputs["mean_score"]) == (
        "inconclusive", "1", "", "",
    )  # fmt: skip
