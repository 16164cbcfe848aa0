"""Append the Markdown summary to `$GITHUB_STEP_SUMMARY` when running inside GitHub Actions."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from agentv_ci.gating import GateDecision
from agentv_ci.model.result import RunSummary
from agentv_ci.security.redaction import redact


def append_step_summary(
    summary: RunSummary,
    decision: GateDecision,
    *,
    baseline: RunSummary | None = None,
    repo_root: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Path | None:
    """Append the summary (the same body as `--markdown`) to the job summary file, if there is one.

    Returns the file written, or None outside GitHub Actions. A file that cannot be written is
    ignored: the job summary is a convenience and must never change the run's verdict.
    """
    target = (env if env is not None else os.environ).get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    # lazy: the Markdown reporter loaded only when `append_step_summary` runs
    from agentv_ci.reporting.markdown import render_markdown_for

    text = render_markdown_for(summary, decision, baseline, repo_root=repo_root)
    path = Path(target)
    try:
        with path.open("a", encoding="utf-8") as handle:
            handle.write(redact(text) + "\n")
    except OSError:
        return None
    return path
