"""OpenMetrics text for GitLab's metrics report (`artifacts:reports:metrics`, `metrics.txt`).

GitLab's merge-request widget shows each metric of the MR next to its value on the target branch:
changed, new, removed, unchanged. Its parser (`Gitlab::Ci::Parsers::Metrics::Generic`) reads each
line as shell words after cutting everything from `#` on: the first word is the metric's name,
labels included, the second its value, both compared as strings. So:

- suites go in a `suite` label, escaped as OpenMetrics says (backslash, quote, line feed); GitLab
  keeps labels in the name it compares (`agentv_ci_suite_pass_ratio{suite=smoke}`), so two suites
  never share a metric, as two names sanitised into `agentv_ci_<suite>_...` could;
- a label value never holds `#` (it would cut GitLab's line mid-quote and fail the whole report):
  `#` is written as `＃` (U+FF03), control characters as visible escapes, and two suites that would
  then read the same get a hash of their real name appended;
- values are formatted the same way on every run (a number that did not change reads the same);
  an unknown figure (no conclusive test, no cost reported) is `NaN`, never 0.

The figures are those of the console and the Markdown summary (`reporting.tally`): pass ratio and
mean score over conclusive results, overall and per suite; tests and execution errors; cost (what the
run paid when it knows, else the sum of the results' costs), tokens and wall-clock duration.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator
from dataclasses import dataclass

from agentv_ci.model.result import RunSummary
from agentv_ci.plugins import ReportOptions
from agentv_ci.results.tally import tally_of
from agentv_ci.results.totals import Totals
from agentv_ci.text_safety import printable

__all__ = ["OpenMetricsReporter", "label_value", "render_openmetrics"]

PREFIX = "agentv_ci_"


@dataclass(frozen=True)
class _Family:
    name: str
    help: str


_PASS = _Family("pass_ratio", "Passed tests / conclusive tests (passed + failed)")
_MEAN = _Family("mean_score", "Mean score of the conclusive tests")
_TESTS = _Family("tests", "Tests (x targets) in the run")
_ERRORS = _Family("errors", "Tests that could not run (execution errors): the verdict is inconclusive")
_COST = _Family("cost_usd", "Cost of the run in US dollars")
_TOKENS = _Family("tokens", "Tokens used (input + output)")
_DURATION = _Family("duration_seconds", "Wall-clock duration of the run")


def _number(value: float | int | None, digits: int = 6) -> str:
    if value is None:
        return "NaN"
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(round(value, digits))


def label_value(text: str) -> str:
    """`text` as an OpenMetrics label value that GitLab's line parser keeps whole (quotes added)."""
    shown = printable(text).replace("#", "＃")
    return '"' + shown.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _suite_labels(suites: list[Totals]) -> dict[str, str]:
    """A distinct `{suite="..."}` per suite name, even when escaping makes two read alike."""
    shown = {suite.name: label_value(suite.name) for suite in suites}
    counts: dict[str, int] = {}
    for value in shown.values():
        counts[value] = counts.get(value, 0) + 1
    labels = {}
    for name, value in shown.items():
        if counts[value] > 1:
            digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
            value = label_value(f"{printable(name).replace('#', '＃')} ~{digest}")
        labels[name] = "{suite=" + value + "}"
    return labels


def _family(family: _Family, samples: list[tuple[str, str]]) -> Iterator[str]:
    name = PREFIX + family.name
    yield f"# TYPE {name} gauge\n"
    yield f"# HELP {name} {family.help}.\n"
    for labels, value in samples:
        yield f"{name}{labels} {value}\n"


def render_openmetrics(summary: RunSummary) -> str:
    tally = tally_of(summary.results)
    overall, suites = tally.overall(), tally.by_suite()
    labels = _suite_labels(suites)
    cost = summary.spent_usd if summary.spent_usd is not None else overall.cost_usd
    duration_ms = summary.duration_ms if summary.duration_ms is not None else overall.duration_ms
    lines: list[str] = []
    for family, figure in ((_PASS, "pass_rate"), (_MEAN, "mean_score")):
        lines += _family(family, [("", _number(getattr(overall, figure), 4))])
        suite_family = _Family("suite_" + family.name, family.help + ", per suite")
        lines += _family(suite_family, [(labels[s.name], _number(getattr(s, figure), 4)) for s in suites])
    lines += _family(_TESTS, [("", _number(overall.tests))])
    lines += _family(_ERRORS, [("", _number(overall.errors))])
    lines += _family(_COST, [("", _number(cost))])
    lines += _family(_TOKENS, [("", _number(overall.tokens))])
    seconds = None if duration_ms is None else duration_ms / 1000
    lines += _family(_DURATION, [("", _number(seconds, 3))])
    lines.append("# EOF\n")
    return "".join(lines)


class OpenMetricsReporter:
    """Writes OpenMetrics text for GitLab's metrics report (`artifacts:reports:metrics`)."""

    def write(self, summary: RunSummary, options: ReportOptions) -> None:
        options.path.write_text(render_openmetrics(summary), encoding="utf-8")
