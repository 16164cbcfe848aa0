"""Baseline diff with noise-aware verdicts.

Tests are matched by suite + test id + target. Per test: base score, head score, delta and a status:

- `new` / `removed`: only on one side; `not comparable`: either side errored or did not run.
- `changed`: both rows carry a definition fingerprint (running/fingerprints.py) and they differ: the
  test's input, graders, threshold or target changed, so a score move says nothing about the answers.
  Never a regression or an improvement, and left out of the suite deltas. Rows without fingerprints
  (older runs, AgentV's) compare as below.
- With repeats on both sides (>= 2 attempts each) a change must be unlikely to be noise:
  the pass counts go through a one-sided Fisher exact test and the attempt scores through a 95%
  Welch interval of the mean difference. Significant (p < 0.05 or the interval excludes 0):
  `broken` (pass -> fail), `fixed` (fail -> pass), `regressed` / `improved` (score moved, verdict
  kept). Not significant: `possible regression` for drops, `possible improvement` for a fail -> pass
  flip, `unchanged` otherwise.
- With single samples: a verdict flip is `broken` / `fixed` (a flip by less than `NOISE_FLOOR`, e.g.
  0.8 -> 0.7999 across a 0.8 bar, is only `possible regression` / `possible improvement`); a score
  move of at least `SINGLE_SAMPLE_TOLERANCE` (0.1, AgentV compare's default) is `regressed` /
  `improved`; a smaller drop is `possible regression`.
- A score move below `NOISE_FLOOR` (0.01) is never flagged.

Per suite (and overall): the mean of the per-test deltas over the matched tests (`changed`, `new`,
`removed` and `not comparable` tests left out) with its standard error; the reports say over how
many of the suite's tests it was taken and list the ones left out (suite_deltas.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Literal

import msgspec

from agentv_ci.model.result import TestResult
from agentv_ci.reporting.gc_pause import paused_gc
from agentv_ci.reporting.results_file import aggregate_attempts
from agentv_ci.stats import fisher_exact_greater, fisher_exact_less, mean, standard_error, welch_interval

__all__ = [
    "NOISE_FLOOR",
    "SINGLE_SAMPLE_TOLERANCE",
    "Comparison",
    "SuiteComparison",
    "TestComparison",
    "compare_runs",
    "render_comparison",
]

NOISE_FLOOR = 0.01
SINGLE_SAMPLE_TOLERANCE = 0.1
ALPHA = 0.05

Status = Literal[
    "improved",
    "regressed",
    "possible regression",
    "possible improvement",
    "fixed",
    "broken",
    "new",
    "removed",
    "unchanged",
    "not comparable",
    "changed",
]
_WORSE = ("broken", "regressed", "possible regression")


class TestComparison(msgspec.Struct, omit_defaults=True):
    """One matched (or unmatched) test x target."""

    __test__ = False  # not a pytest class

    suite: str
    test_id: str
    target: str
    status: Status
    base_score: float | None = None
    head_score: float | None = None
    delta: float | None = None
    base_passes: int | None = None
    base_attempts: int | None = None
    head_passes: int | None = None
    head_attempts: int | None = None
    p_value: float | None = None  # one-sided Fisher exact, in the direction of the change
    ci95: tuple[float, float] | None = None  # Welch interval of the score difference
    base_fingerprint: str | None = None  # set on `changed` rows: the two definition fingerprints
    head_fingerprint: str | None = None

    @property
    def label(self) -> str:
        return f"{self.suite}/{self.test_id} [{self.target}]"

    def describe(self) -> str:
        parts = ["definition changed"] if self.status == "changed" else []
        if self.base_score is not None and self.head_score is not None:
            base, head = self.base_score, self.head_score
            hidden = base != head and f"{base:.3f}" == f"{head:.3f}"
            digits = 4 if hidden else 3  # show a 0.0001 change instead of "0.800 -> 0.800"
            parts.append(f"{base:.{digits}f} -> {head:.{digits}f}")
        if (self.base_attempts or 0) > 1 or (self.head_attempts or 0) > 1:
            parts.append(
                f"passes {self.base_passes}/{self.base_attempts} -> {self.head_passes}/{self.head_attempts}"
            )
        if self.p_value is not None:
            parts.append(f"p={self.p_value:.3f}")
        if self.ci95 is not None:
            parts.append(f"95% CI [{self.ci95[0]:+.3f}, {self.ci95[1]:+.3f}]")
        return ", ".join(parts)


class SuiteComparison(msgspec.Struct, omit_defaults=True):
    suite: str
    matched: int
    mean_delta: float | None = None
    stderr: float | None = None
    counts: dict[str, int] = {}


class Comparison(msgspec.Struct):
    tests: list[TestComparison]
    suites: list[SuiteComparison]
    overall: SuiteComparison

    @property
    def regressions(self) -> list[TestComparison]:
        """Significant regressions (`broken`, `regressed`)."""
        return [t for t in self.tests if t.status in ("broken", "regressed")]

    @property
    def worse(self) -> list[TestComparison]:
        return [t for t in self.tests if t.status in _WORSE]


def _attempts(result: TestResult) -> tuple[int, int, list[float]]:
    """(passes, attempts, conclusive attempt scores) of a result."""
    done = [t for t in result.trials if t.execution_status in ("ok", "quality_failure")]
    if done:
        return sum(1 for t in done if t.verdict == "pass"), len(done), [t.score for t in done]
    agg = result.aggregation
    if agg is not None and agg.total_attempts > 1:  # clamped: a foreign row may claim 5 of 3
        return min(max(agg.passed_attempts, 0), agg.total_attempts), agg.total_attempts, list(agg.scores)
    return (1 if result.verdict == "pass" else 0), 1, [result.score]


def _conclusive(result: TestResult) -> bool:
    return result.execution_status in ("ok", "quality_failure") and result.verdict != "skip"


def _classify(base: TestResult, head: TestResult) -> TestComparison:
    row = TestComparison(head.suite, head.test_id, head.target, "unchanged")
    if base.fingerprint and head.fingerprint and base.fingerprint != head.fingerprint:
        row.status = "changed"  # another test now: its score move is not a regression nor a fix
        row.base_fingerprint, row.head_fingerprint = base.fingerprint, head.fingerprint
        row.base_score = base.score if _conclusive(base) else None
        row.head_score = head.score if _conclusive(head) else None
        if row.base_score is not None and row.head_score is not None:
            row.delta = round(row.head_score - row.base_score, 6)
        return row
    if not (_conclusive(base) and _conclusive(head)):
        row.status = "not comparable"
        row.base_score = base.score if _conclusive(base) else None
        row.head_score = head.score if _conclusive(head) else None
        return row
    bp, bn, bscores = _attempts(base)
    hp, hn, hscores = _attempts(head)
    delta = head.score - base.score
    row.base_score, row.head_score, row.delta = base.score, head.score, round(delta, 6)
    row.base_passes, row.base_attempts, row.head_passes, row.head_attempts = bp, bn, hp, hn
    base_pass, head_pass = base.verdict == "pass", head.verdict == "pass"
    if bn >= 2 and hn >= 2:
        p_less, p_greater = fisher_exact_less(bp, bn, hp, hn), fisher_exact_greater(bp, bn, hp, hn)
        ci = welch_interval(bscores, hscores) if len(bscores) >= 2 and len(hscores) >= 2 else None
        # scores live in [0, 1], so their difference in [-1, 1]
        row.ci95 = (round(max(ci[0], -1.0), 6), round(min(ci[1], 1.0), 6)) if ci else None
        worse = p_less < ALPHA or (ci is not None and ci[1] < 0 and delta < -NOISE_FLOOR)
        better = p_greater < ALPHA or (ci is not None and ci[0] > 0 and delta > NOISE_FLOOR)
        row.p_value = round(p_less if delta <= 0 else p_greater, 6)
        if base_pass and not head_pass:
            row.status = "broken" if worse else "possible regression"
        elif head_pass and not base_pass:
            row.status = "fixed" if better else "possible improvement"
        elif delta < -NOISE_FLOOR:
            row.status = "regressed" if worse else "possible regression"
        elif delta > NOISE_FLOOR and better:
            row.status = "improved"
        return row
    flip_is_noise = abs(delta) < NOISE_FLOOR  # e.g. 0.8 -> 0.7999 across a 0.8 bar
    if base_pass and not head_pass:
        row.status = "possible regression" if flip_is_noise else "broken"
    elif head_pass and not base_pass:
        row.status = "possible improvement" if flip_is_noise else "fixed"
    elif delta <= -SINGLE_SAMPLE_TOLERANCE:
        row.status = "regressed"
    elif delta < -NOISE_FLOOR:
        row.status = "possible regression"
    elif delta >= SINGLE_SAMPLE_TOLERANCE:
        row.status = "improved"
    return row


def _key(result: TestResult) -> tuple[str, str, str]:
    return (result.suite, result.test_id, result.target)


def _suite_stats(name: str, rows: Iterable[TestComparison]) -> SuiteComparison:
    rows = list(rows)
    deltas = [r.delta for r in rows if r.delta is not None and r.status != "changed"]
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.status] = counts.get(r.status, 0) + 1
    return SuiteComparison(
        suite=name,
        matched=len(deltas),
        mean_delta=round(mean(deltas), 6) if deltas else None,
        stderr=round(standard_error(deltas), 6) if len(deltas) >= 2 else None,
        counts=dict(sorted(counts.items())),
    )


def compare_runs(base: Iterable[TestResult], head: Iterable[TestResult]) -> Comparison:
    """Diff two runs (rows of the same test x target are first merged into one with attempts)."""
    with paused_gc():
        return _compare(base, head)


def _compare(base: Iterable[TestResult], head: Iterable[TestResult]) -> Comparison:
    base_map = {_key(r): r for r in aggregate_attempts(base)}
    head_map = {_key(r): r for r in aggregate_attempts(head)}
    tests: list[TestComparison] = []
    for key in sorted(base_map.keys() | head_map.keys()):
        b, h = base_map.get(key), head_map.get(key)
        if b is None and h is not None:
            tests.append(TestComparison(*key, status="new", head_score=h.score if _conclusive(h) else None))
        elif h is None and b is not None:
            tests.append(
                TestComparison(*key, status="removed", base_score=b.score if _conclusive(b) else None)
            )
        elif b is not None and h is not None:
            tests.append(_classify(b, h))
    by_suite: dict[str, list[TestComparison]] = {}
    for test in tests:
        by_suite.setdefault(test.suite, []).append(test)
    return Comparison(
        tests=tests,
        suites=[_suite_stats(name, by_suite[name]) for name in sorted(by_suite)],
        overall=_suite_stats("overall", tests),
    )


# ------------------------------------------------------------------ rendering

_SEVERITY = ("broken", "regressed", "possible regression", "not comparable", "changed", "fixed")
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
    from agentv_ci.suite_deltas import delta_text, left_out_of, left_out_text

    counts = ", ".join(f"{n} {k}" for k, n in s.counts.items())
    lines = [f"{s.suite}: mean delta {delta_text(s)}; {counts}"]
    left_out = left_out_text(left_out_of(comparison, s.suite)) if s is not comparison.overall else ""
    return lines + ([f"  not in the delta: {left_out}"] if left_out else [])


def _render_table(comparison: Comparison) -> str:
    from agentv_ci.text_safety import clean_text, neutralise_workflow_commands, printable

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
    from agentv_ci.suite_deltas import suite_size
    from agentv_ci.text_safety import escape_markdown_inline as esc

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
