"""Which baseline the run was compared with, named as the PR comment names it
(agentv_ci's `baseline_markdown_line`, in HTML), and the comparison the page shows."""

from __future__ import annotations

import re
from html import escape

from agentv_ci.api import BaselineSource, Comparison, GateDecision, RunSummary, compare_runs

_SAFE_URL = re.compile(r"https://[^\s()<>\[\]`\"'\\]{1,400}")  # a link only to a plain https URL
_SHA = re.compile(r"[0-9a-fA-F]{7,64}")
_MAX_TEXT = 400
_MAX_FILES = 10  # sidecars named (the rest counted), as in the comment


def comparison_of(
    summary: RunSummary, decision: GateDecision | None, baseline: RunSummary | None
) -> Comparison | None:
    """The diff the gates judged (the PR comment shows the same one), else one against `baseline`."""
    if decision is not None and decision.comparison is not None:
        return decision.comparison
    return compare_runs(baseline.results, summary.results) if baseline is not None else None


def _cap(text: str) -> str:
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


def _code(text: str) -> str:
    return f"<code>{escape(_cap(text))}</code>"


def _commit(sha: str | None) -> str:
    return _code(sha) if sha and _SHA.fullmatch(sha) else escape(_cap(sha or "?"))


def _what(source: BaselineSource) -> str:
    if source.kind == "artifact":
        text = f"artifact {_code(source.name)}"
        text += f" (id {source.artifact_id})" if source.artifact_id else ""
        if source.run_id is not None:
            url = source.run_url or ""
            run = (
                f'<a href="{escape(url)}" rel="noopener noreferrer">{source.run_id}</a>'
                if _SAFE_URL.fullmatch(url)
                else str(source.run_id)
            )
            text += f" of workflow run {run}"
        return text + (f", commit {_commit(source.commit)}" if source.commit else "")
    if source.kind == "commit":
        asked = source.ref and source.ref != source.commit
        return f"re-run at commit {_commit(source.commit or source.ref)}" + (
            f" ({_code(source.ref or '')})" if asked else ""
        )
    if source.kind == "sidecar":
        shown = [_code(f) for f in source.files[:_MAX_FILES]]
        more = len(source.files) - len(shown)
        return "committed sidecar " + ", ".join(shown) + (f" and {more} more" if more > 0 else "")
    return f"results at {_code(source.name)}"


def baseline_line(source: BaselineSource | None, *, compared: bool) -> str:
    """`<p class="baseline">Baseline: ...</p>`, `No baseline: REASON.`, or (a baseline the run was
    gated against but that was not given again, e.g. `report` without `--baseline`) that one, saying
    why there are no deltas. Empty when no baseline was asked for and none was given."""
    if source is None:
        return (
            '<p class="baseline">Baseline: the results given (their source was not recorded).</p>'
            if compared
            else ""
        )
    if source.kind == "none":
        reason = escape(_cap(source.reason or "unknown"))
        return f'<p class="baseline none"><strong>No baseline:</strong> {reason}.</p>'
    if not compared:
        return (
            f'<p class="baseline"><strong>Baseline (when the run was gated):</strong> {_what(source)}; '
            "not read again here, so no deltas.</p>"
        )
    return f'<p class="baseline"><strong>Baseline:</strong> {_what(source)}.</p>'
