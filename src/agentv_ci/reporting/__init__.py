"""Reporters (JUnit, SARIF, Markdown, JSONL, console) and the results file.

Reporters are plugins in the `agentv_ci.reporters` namespace; `write_reports` loads the ones asked
for by name and hands each the same `RunSummary`. A third-party reporter that raises is contained:
it is named on stderr, the reports after it are still written, and the verdict is not changed.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentv_ci.errors import AgentvCiError, ConfigError, UsageError
from agentv_ci.model.result import RunSummary
from agentv_ci.security.redaction import redact_file

if TYPE_CHECKING:
    from agentv_ci.gating import GateDecision

__all__ = ["ReporterFailure", "parse_report_options", "reporter_class", "write_report", "write_reports"]


class ReporterFailure(AgentvCiError):
    """A third-party reporter raised while writing its report."""


def parse_report_options(values: Sequence[str]) -> list[tuple[str, Path]]:
    """`--report NAME=PATH` values as (reporter name, path); each reporter is loaded and checked now,
    so a typo or a broken plugin stops the command before anything runs."""
    reports: list[tuple[str, Path]] = []
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name.strip() or not path.strip():
            raise UsageError(
                f"--report takes NAME=PATH, got {value!r}", hint="e.g. --report html=results/report.html"
            )
        reporter_class(name.strip())
        reports.append((name.strip(), Path(path.strip())))
    return reports


def reporter_class(name: str) -> type[Any]:
    """The reporter plugin registered as `name`; `ConfigError` (with a did-you-mean) when none is."""

    # lazy: the plugin registry (entry points) loaded only when `reporter_class` runs
    from agentv_ci.plugins import REPORTERS_NAMESPACE, list_plugins, load_plugin_class

    cls = load_plugin_class(REPORTERS_NAMESPACE, name)
    if cls is None:
        installed = sorted({p.name for p in list_plugins(REPORTERS_NAMESPACE)})
        close = difflib.get_close_matches(name, installed, n=1)
        hint = f"did you mean `{close[0]}`? " if close else ""
        raise ConfigError(
            f"no reporter named {name!r} is installed",
            hint=f"{hint}installed reporters: {', '.join(installed)} (see `agentv-ci plugins`)",
        )
    return cls


def write_report(
    name: str,
    summary: RunSummary,
    path: Path,
    *,
    repo_root: Path,
    baseline: RunSummary | None = None,
    decision: GateDecision | None = None,
    selection: Mapping[str, str] | None = None,
    sarif_category: str | None = None,
) -> None:
    """Write one report with the reporter plugin registered as `name`; the keywords reach it as the
    fields of its `ReportOptions`."""
    # lazy: the plugin registry (entry points) loaded only when `write_report` runs
    from agentv_ci.plugins import ReportOptions

    cls = reporter_class(name)
    options = ReportOptions(
        path, repo_root, baseline, decision=decision, selection=selection, sarif_category=sarif_category
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    # lazy: `results.gc_pause` loaded only when `write_report` runs
    from agentv_ci.results.gc_pause import paused_gc

    try:
        with paused_gc():
            cls().write(summary, options)
    except Exception as exc:
        # lazy: the plugin registry (entry points) loaded only when `write_report` runs
        from agentv_ci.plugins.checks import is_builtin

        if is_builtin(cls):
            raise  # a bug of agentv-ci's own reporters: exit 4 with the traceback saved
        raise _failure(cls, path, exc) from exc
    # Whatever a reporter (a third-party one too) wrote passes the redaction layer: its rows were
    # redacted when written, this catches anything else that carried a secret in.
    redact_file(path)


def write_reports(
    summary: RunSummary,
    *,
    junit: Path | None = None,
    sarif: Path | None = None,
    markdown: Path | None = None,
    repo_root: Path,
    baseline: RunSummary | None = None,
    selection: dict[str, str] | None = None,
    decision: GateDecision | None = None,
    jsonl: Path | None = None,
    sarif_category: str | None = None,
    reports: Sequence[tuple[str, Path]] = (),
) -> None:
    """Write every report that has a path, then each (reporter plugin name, path) of `reports`.
    `selection` (eval path -> why it ran) overrides
    `summary.selection`; `decision` is the gate outcome shown in the Markdown verdict line (computed
    with default gates when omitted); `sarif_category` becomes the SARIF run's `automationDetails.id`."""
    builtins = (("jsonl", jsonl), ("junit", junit), ("sarif", sarif), ("markdown", markdown))
    for name, path in [*((n, p) for n, p in builtins if p is not None), *reports]:
        try:
            write_report(
                name,
                summary,
                path,
                repo_root=repo_root,
                baseline=baseline,
                decision=decision,
                selection=selection,
                sarif_category=sarif_category or None,
            )
        except ReporterFailure as exc:  # named on stderr; the other reports are still written
            print(exc.render(), file=sys.stderr, flush=True)


def _failure(cls: type[Any], path: Path, exc: Exception) -> ReporterFailure:
    # lazy: the plugin registry (entry points) loaded only when `_failure` runs
    from agentv_ci.plugins.registry import describe_plugin, fault_text

    return ReporterFailure(
        f"{describe_plugin('reporter', cls)} failed writing {path}: {fault_text(exc)}",
        hint="the other reports were written and the verdict is unchanged; "
        "`agentv-ci plugins --check` checks the plugin's contract",
    )
