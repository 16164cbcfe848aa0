"""The post-run service's stages (finishing/): baseline -> gate -> reports -> console, with real
collaborators that record what they were given (the console, the step summary) and real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentv_ci.errors import ExitCode, UsageError
from agentv_ci.finishing import (
    ComparedBaseline,
    PostRun,
    PostRunRequest,
    ReportDestinations,
    baseline_on_disk,
    history_gates,
)
from agentv_ci.gating import GateDecision, GateOptions
from agentv_ci.model.baseline import BaselineSource
from agentv_ci.model.result import RunSummary, TestResult


def _row(test_id: str, score: float) -> TestResult:
    passed = score >= 0.8
    return TestResult(
        test_id, "s", "m", score, "ok" if passed else "quality_failure", verdict="pass" if passed else "fail"
    )


class Recorder:
    """The console, warnings and step summary of a PostRun, each event in the order it came."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def echo(self, text: str) -> None:
        self.events.append(("echo", text))

    def warn(self, text: str) -> None:
        self.events.append(("warn", text))

    def step_summary(
        self,
        summary: RunSummary,
        decision: GateDecision,
        *,
        baseline: RunSummary | None,
        repo_root: Path | None,
    ) -> None:
        named = summary.baseline.describe() if summary.baseline is not None else "-"
        self.events.append(
            (
                "step",
                f"{decision.exit_code.name} baseline={named} rows={len(baseline.results) if baseline else 0}",
            )
        )

    def service(self, *, step_summary: bool = True) -> PostRun:
        return PostRun(
            echo=self.echo, warn=self.warn, step_summary=self.step_summary if step_summary else None
        )


def _request(
    tmp_path: Path, summary: RunSummary, baseline: ComparedBaseline, **fields: object
) -> PostRunRequest:
    run_dir = tmp_path / "run"
    run_dir.mkdir(exist_ok=True)
    (run_dir / "summary.json").write_text('{"total": 1}\n', encoding="utf-8")
    values: dict[str, object] = {
        "summary": summary,
        "baseline": lambda _ran: baseline,
        "gates": lambda _ran, _compared: GateOptions(max_regression=0.1),
        "reports": ReportDestinations(markdown=tmp_path / "summary.md", junit=tmp_path / "junit.xml"),
        "repo_root": tmp_path,
        "run_dir": run_dir,
        **fields,
    }
    return PostRunRequest(**values)  # type: ignore[arg-type]


def test_the_stages_run_in_order_and_each_sees_the_baseline_named(tmp_path: Path) -> None:
    base = ComparedBaseline(RunSummary([_row("a", 1.0)]), BaselineSource("path", name="base/index.jsonl"))
    recorder = Recorder()
    seen: list[str] = []

    def gates(ran: RunSummary, compared: ComparedBaseline) -> GateOptions:
        seen.append(f"{ran.baseline == base.source} {compared is base}")
        return GateOptions()

    finished = recorder.service().finish(
        _request(tmp_path, RunSummary([_row("a", 0.2)]), base, gates=gates, warnings=("slow target",))
    )

    assert seen == ["True True"]  # the gates are chosen once the summary names its baseline
    assert finished.exit_code == ExitCode.GATE_FAILED and finished.baseline is base
    assert finished.summary.baseline == base.source
    recorded = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert recorded["baseline"]["name"] == "base/index.jsonl" and recorded["total"] == 1
    assert "base/index.jsonl" in (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert (tmp_path / "junit.xml").is_file()
    kinds = [kind for kind, _ in recorder.events]
    assert kinds == ["step", "warn", "echo"]  # reports and step summary, then warnings, then the verdict
    assert recorder.events[0] == ("step", "GATE_FAILED baseline=results at base/index.jsonl rows=1")
    assert recorder.events[1] == ("warn", "warning: slow target")
    assert "RESULT: FAILED" in recorder.events[2][1]


def test_an_interrupted_run_that_looks_complete_is_inconclusive_never_green(tmp_path: Path) -> None:
    recorder = Recorder()
    green = RunSummary([_row("a", 1.0)])

    passed = recorder.service().finish(_request(tmp_path, green, ComparedBaseline()))
    stopped = recorder.service().finish(_request(tmp_path, green, ComparedBaseline(), interrupted="the run"))

    assert passed.exit_code == ExitCode.OK
    assert stopped.exit_code == ExitCode.INCONCLUSIVE and not stopped.decision.passed
    assert stopped.decision.reasons[-1] == "interrupted: the run did not finish"


def test_without_a_baseline_nothing_is_recorded_and_without_a_page_no_step_summary(tmp_path: Path) -> None:
    recorder = Recorder()
    request = _request(tmp_path, RunSummary([_row("a", 1.0)]), ComparedBaseline())

    finished = recorder.service(step_summary=False).finish(request)

    assert finished.summary.baseline is None
    assert "baseline" not in json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert [kind for kind, _ in recorder.events] == ["echo"]


def test_the_baseline_stage_alone_records_it(tmp_path: Path) -> None:
    source = BaselineSource("path", name="b.jsonl")
    summary, compared = (
        Recorder()
        .service()
        .compare(_request(tmp_path, RunSummary([]), ComparedBaseline(RunSummary([]), source)))
    )
    assert summary.baseline == source and compared.source == source
    assert (
        json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))["baseline"]["name"]
        == "b.jsonl"
    )


def test_report_s_gates_refuse_max_regression_without_a_baseline() -> None:
    policy = history_gates(GateOptions(max_regression=0.1), None, regression_needs_baseline=True)
    with pytest.raises(UsageError, match="--max-regression needs --baseline"):
        policy(RunSummary([]), ComparedBaseline())
    assert policy(RunSummary([]), ComparedBaseline(RunSummary([]))).max_regression == 0.1
    # `run` checked the flag before running (sidecars that exist): its policy does not again
    assert (
        history_gates(GateOptions(max_regression=0.1), None)(
            RunSummary([]), ComparedBaseline()
        ).max_regression
        == 0.1
    )


def test_a_baseline_on_disk_is_the_path_given_else_the_sidecars_else_none(tmp_path: Path) -> None:
    loaded = RunSummary([_row("a", 1.0)])
    given = baseline_on_disk(tmp_path / "base", [], tmp_path, loaded=loaded)
    assert given == ComparedBaseline(loaded, BaselineSource("path", name=str(tmp_path / "base")))
    assert baseline_on_disk(None, [_row("a", 1.0)], tmp_path) == ComparedBaseline()
