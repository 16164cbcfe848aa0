"""`agentv-ci flaky` output: a table for people, a JSON list for programs."""

from __future__ import annotations

import msgspec

from agentv_ci.history.flakiness import FlakinessReport
from agentv_ci.text_safety import printable

__all__ = ["flakiness_json", "flakiness_table"]

_HEADER = (
    f"{'LABEL':<12}{'RUNS':>6}{'ATTEMPTS':>10}{'PASSES':>8}  {'PASS RATE [95% CI]':<20}{'FLIPS':>6}  TEST"
)


def flakiness_table(report: FlakinessReport) -> str:
    """One line per test x target (the name last: test ids are data, of any length, shown escaped)."""
    lines = [_HEADER]
    for t in report.tests:
        rate = f"{t.pass_rate:.0%} [{t.interval[0]:.0%}, {t.interval[1]:.0%}]"
        counts = f"{t.runs:>6}{t.attempts:>10}{t.passes:>8}"
        lines.append(f"{t.label:<12}{counts}  {rate:<20}{t.flips:>6}  {printable(t.name)}")
    tally = {label: sum(1 for t in report.tests if t.label == label) for label in ("flaky", "stable-fail")}
    lines.append(
        f"{len(report.tests)} test(s) over {report.runs} run(s): {tally['flaky']} flaky, "
        f"{tally['stable-fail']} stable-fail, "
        f"{len(report.tests) - tally['flaky'] - tally['stable-fail']} stable-pass"
    )
    return "\n".join(lines)


def flakiness_json(report: FlakinessReport) -> str:
    """The tests as a JSON list of objects (`suite`, `test_id`, `target`, `label` and the counts)."""
    return msgspec.json.encode(report.tests).decode()
