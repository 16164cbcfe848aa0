"""The post-run service's first stage: the baseline a run is compared with, stamped on its summary."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from msgspec.structs import replace as with_fields

from agentv_ci.model.baseline import BaselineSource
from agentv_ci.model.result import RunSummary, TestResult
from agentv_ci.reporting.baseline_report import record_baseline
from agentv_ci.results.results_file import load_run
from agentv_ci.results.sidecars import load_sidecar_baseline

__all__ = ["BaselineResolver", "ComparedBaseline", "baseline_on_disk", "compare"]


@dataclass(frozen=True)
class ComparedBaseline:
    """The baseline's results (None: nothing to compare with) and where they came from, or why there
    are none (`source`; None when no baseline was asked for and none was found)."""

    summary: RunSummary | None = None
    source: BaselineSource | None = None


# How a caller finds the baseline of a run's summary: a file (`run`, `report`), the base branch's
# artifact or a re-run (the Action, which resolves it before and passes a constant).
BaselineResolver = Callable[[RunSummary], ComparedBaseline]


def baseline_on_disk(
    path: Path | None, results: Iterable[TestResult], root: Path, *, loaded: RunSummary | None = None
) -> ComparedBaseline:
    """`--baseline PATH` (`loaded`: its results, when the caller read them already), else the committed
    sidecars of the eval files `results` came from (paths relative to `root`), else none."""
    if path is not None:
        summary = loaded if loaded is not None else load_run(path)
        return ComparedBaseline(summary, BaselineSource("path", name=str(path)))
    sidecars = load_sidecar_baseline(results, root)
    return ComparedBaseline(sidecars.summary, sidecars.source) if sidecars is not None else ComparedBaseline()


def compare(summary: RunSummary, baseline: ComparedBaseline, run_dir: Path | None) -> RunSummary:
    """`summary` naming the baseline it is compared with (the console, the Markdown and the comment
    say it), also recorded in `run_dir`'s summary.json when there is one to record it in."""
    if baseline.source is None:
        return summary
    if run_dir is not None:
        record_baseline(run_dir, baseline.source)
    return with_fields(summary, baseline=baseline.source)
