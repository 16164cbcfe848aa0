"""Step outputs: `name<<DELIMITER` blocks appended to the file at `$GITHUB_OUTPUT`.

The heredoc form is what @actions/core's `setOutput` writes; it carries any value, newlines included.
The delimiter is random (`ghadelimiter_<uuid4>`) and checked against the name and the value, so no
value can end its block early and set another output.
"""

from __future__ import annotations

import math
import os
import re
import uuid
from collections.abc import Mapping
from pathlib import Path

from agentv_ci.gating import GateDecision
from agentv_ci.model.result import RunSummary
from agentv_ci.results.totals import totals_of
from agentv_ci.security.redaction import redact

__all__ = ["OutputValue", "output_text", "run_outputs", "write_outputs"]

OutputValue = str | int | float | bool | None
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_FLOAT_DIGITS = 4  # pass_rate 5/6 -> 0.8333
_COST_DIGITS = 6  # cost is summed at micro-dollar precision (results/totals.py)


def output_text(value: OutputValue, *, digits: int = _FLOAT_DIGITS) -> str:
    """An output value as text: None -> "", bools -> `true`/`false`, floats rounded to `digits`
    decimals without trailing zeros (1.0 -> `1`, 5/6 -> `0.8333`); NaN and infinities -> ""."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if not math.isfinite(value):
            return ""
        text = f"{value:.{digits}f}".rstrip("0").rstrip(".")
        return "0" if text in ("-0", "") else text
    return str(value)


def _delimiter(name: str, value: str) -> str:
    while True:  # a uuid4 in model text is astronomically unlikely, but checked like @actions/core
        delimiter = f"ghadelimiter_{uuid.uuid4()}"
        if delimiter not in name and delimiter not in value:
            return delimiter


def write_outputs(values: Mapping[str, OutputValue], *, env: Mapping[str, str] = os.environ) -> Path | None:
    """Append `values` as step outputs to the file named by `$GITHUB_OUTPUT` (heredoc form).

    Returns the file written, or None outside GitHub Actions or when it cannot be written (outputs are
    a convenience: the caller warns, the run's verdict stands). An output name outside
    `[A-Za-z_][A-Za-z0-9_-]*` is a programming error (ValueError), raised before anything is written.
    """
    for name in values:
        if not _NAME.fullmatch(name):
            raise ValueError(f"invalid output name {name!r}: expected [A-Za-z_][A-Za-z0-9_-]*")
    target = env.get("GITHUB_OUTPUT")
    if not target:
        return None
    blocks = []
    for name, value in values.items():
        text = redact(output_text(value))
        delimiter = _delimiter(name, text)
        blocks.append(f"{name}<<{delimiter}\n{text}\n{delimiter}\n")
    path = Path(target)
    try:
        with path.open("a", encoding="utf-8", errors="replace", newline="\n") as handle:
            handle.write("".join(blocks))
    except OSError:
        return None
    return path


def run_outputs(
    summary: RunSummary,
    decision: GateDecision,
    *,
    results_path: Path | str | None,
    junit_path: Path | str | None,
    sarif_path: Path | str | None,
    comment_url: str | None,
    html_path: Path | str | None = None,
) -> dict[str, str]:
    """The Action's outputs for one run, as text.

    `verdict` is `passed` / `failed` / `inconclusive` (the label of `GateDecision.verdict`, lower
    case) and `verdict_text` the whole verdict line the console and the summary show. The counts,
    `pass_rate` (passed / (passed + failed)) and `mean_score` are the gate's totals (`decision.totals`:
    the same numbers as the console and the Markdown summary). `cost_usd` is what the run spent
    (`spent_usd`: targets, judges and the Action's baseline re-run, the figure the comment shows and
    the budget counts), else the results' own costs (results read back without a summary.json).
    Missing values (no conclusive test, no cost reported, a report not written) are empty strings.
    """
    totals = decision.totals if decision.totals is not None else totals_of(summary.results)
    cost = summary.spent_usd if summary.spent_usd is not None and not summary.dry_run else totals.cost_usd
    return {
        "verdict": decision.label.lower(),
        "verdict_text": decision.verdict,
        "tests": output_text(totals.tests),
        "passed": output_text(totals.passed),
        "failed": output_text(totals.failed),
        "errors": output_text(totals.errors),
        "not_run": output_text(totals.not_run),
        "pass_rate": output_text(totals.pass_rate),
        "mean_score": output_text(totals.mean_score),
        "cost_usd": output_text(cost, digits=_COST_DIGITS),
        "results_path": "" if results_path is None else str(results_path),
        "junit_path": "" if junit_path is None else str(junit_path),
        "sarif_path": "" if sarif_path is None else str(sarif_path),
        "comment_url": comment_url or "",
        "html_path": "" if html_path is None else str(html_path),
    }
