"""A baseline comparison as text: the `compare` command's table, JSON and Markdown (compare.py decides,
this module words it; model-free text, still escaped)."""

from __future__ import annotations

import json
from typing import Literal

import msgspec

from agentv_ci.compare import Comparison, SuiteComparison, TestComparison
from agentv_ci.reporting.suite_deltas import delta_text, left_out_of, left_out_text, suite_size
from agentv_ci.text_safety import clean_text, neutralise_workflow_commands, printable
from agentv_ci.text_safety import escape_markdown_inline as esc

_SEVERITY = (
    "broken",
    "regressed",
    "possible regression",
    "not comparable",
    "changed",
    "incomparable",
    "fixed",
)
_ORDER = {s: i for i, s in enumerate(_SEVERITY)}


def _fmt(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "-"
    value = round(value, 3) + 0.0  # no "-0.000" for a -0.0001 delta
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _sorted_rows(comparison: Comparison) -> list[TestComparison]:
    return sorted(comparison.tests, key=lambda t: (_ORDER.get(t.status, 99), t.delta or 0.0, _key_of(t)))


def _key_of(t: TestComparison) -> tuple[str, str, str]:
    return (t.suite, t.test_id, t.target)


def _suite_lines(s: SuiteComparison, comparison: Comparison) -> list[str]:
    """`suite: mean delta -0.125 ± 0.040 over 3 of 4 tests; counts`, then the tests left out of it."""
    counts = ", ".join(f"{n} {k}" for k, n in s.counts.items())
    lines = [f"{s.suite}: mean delta {delta_text(s)}; {counts}"]
    left_out = left_out_text(left_out_of(comparison, s.suite)) if s is not comparison.overall else ""
    return lines + ([f"  not in the delta: {left_out}"] if left_out else [])


def _render_table(comparison: Comparison) -> str:
    header = ("status", "test", "base", "head", "delta", "detail")
    rows = [
        (
            t.status,
            printable(t.label),
            _fmt(t.base_score),
            _fmt(t.head_score),
            _fmt(t.delta, True),
            printable(t.describe()),
        )
        for t in _sorted_rows(comparison)
    ]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header) - 1)]
    lines = [
        "  ".join(str(c).ljust(w) for c, w in zip(r[:-1], widths, strict=True)) + "  " + r[-1]
        for r in [header, *rows]
    ]
    lines.append("")
    for s in [*comparison.suites, comparison.overall]:
        lines.extend(printable(line) for line in _suite_lines(s, comparison))
    return neutralise_workflow_commands(clean_text("\n".join(line.rstrip() for line in lines)))


_MARKDOWN_LIMIT = 55_000  # the output is meant for PR comments (GitHub caps them at 65,536)


def _render_markdown(comparison: Comparison) -> str:
    """Suite table first, then changed tests (worst first) until the comment-size budget is spent."""
    out = ["| Suite | Matched | Mean Δ | SE | Changes |", "|---|---:|---:|---:|---|"]
    for s in [*comparison.suites, comparison.overall]:
        counts = ", ".join(f"{n} {k}" for k, n in s.counts.items())
        se = _fmt(s.stderr) if s.stderr is not None else "-"
        mean_delta = _fmt(s.mean_delta, True) if s.matched else "n/a"
        matched = f"{s.matched} of {suite_size(s)}"
        out.append(f"| {esc(s.suite)} | {matched} | {mean_delta} | {se} | {esc(counts)} |")
    changed = [t for t in _sorted_rows(comparison) if t.status != "unchanged"]
    if changed:
        out += ["", "| Status | Test | Base | Head | Δ | Detail |", "|---|---|---:|---:|---:|---|"]
        size = sum(len(line) + 1 for line in out)
        for index, t in enumerate(changed):
            label = t.label if len(t.label) <= 300 else t.label[:299] + "…"
            line = (
                f"| {t.status} | {esc(label)} | {_fmt(t.base_score)} | {_fmt(t.head_score)} "
                f"| {_fmt(t.delta, True)} | {esc(t.describe())} |"
            )
            if size + len(line) > _MARKDOWN_LIMIT:
                out.append(f"\n… {len(changed) - index} more changed tests (`--format json` lists all).")
                break
            out.append(line)
            size += len(line) + 1
    return "\n".join(out)


def render_comparison(comparison: Comparison, fmt: Literal["table", "json", "markdown"] = "table") -> str:
    """The comparison as a plain-text table, JSON, or Markdown (model-free text, still escaped)."""
    if fmt == "json":
        data = msgspec.to_builtins(comparison)
        return json.dumps(data, indent=2, sort_keys=False)
    if fmt == "markdown":
        return _render_markdown(comparison)
    return _render_table(comparison)
