"""Per test x target over a sequence of runs: attempts, passes, a Wilson interval, verdict flips and
a label (`stable-pass`, `stable-fail` or `flaky`).

Only conclusive attempts count (passed or failed): an execution error or a test that did not run
says nothing about the answer, so it is neither a pass nor a failure here. A test whose rows hold no
conclusive attempt is listed in `unmeasured`, never labelled. A flip is a change of the test-level
verdict between two consecutive runs (in the order given) that judged the test. When a test's
definition changed (its fingerprint), only the runs since count: the older ones measured another test.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import msgspec

from agentv_ci.model.result import TestResult
from agentv_ci.statistics.proportions import wilson_interval

__all__ = ["FlakinessReport", "Label", "TestFlakiness", "attempt_counts", "measure_flakiness"]

Label = Literal["stable-pass", "stable-fail", "flaky"]
Key = tuple[str, str, str]


class TestFlakiness(msgspec.Struct, frozen=True, omit_defaults=True):
    """One test x target's record (`interval`: Wilson 95% of `pass_rate`; `runs_passed`: runs
    whose test-level verdict was pass; `fingerprint`: its definition in the newest run)."""

    __test__ = False  # not a pytest class

    suite: str
    test_id: str
    target: str
    label: Label
    runs: int
    runs_passed: int
    attempts: int
    passes: int
    flips: int
    pass_rate: float
    interval: tuple[float, float]
    fingerprint: str | None = None

    @property
    def name(self) -> str:
        return f"{self.suite}/{self.test_id} [{self.target}]"


class FlakinessReport(msgspec.Struct, frozen=True):
    """The tests measured (flaky first, then by name), the tests seen without a conclusive attempt,
    and how many runs were read."""

    tests: list[TestFlakiness]
    unmeasured: list[str]
    runs: int


@dataclass
class _Tally:
    runs: int = 0
    runs_passed: int = 0
    attempts: int = 0
    passes: int = 0
    flips: int = 0
    last: bool | None = None
    fingerprint: str | None = None


_CONCLUSIVE = frozenset({"ok", "quality_failure"})
_ORDER: dict[Label, int] = {"flaky": 0, "stable-fail": 1, "stable-pass": 2}


def attempt_counts(result: TestResult) -> tuple[int, int]:
    """(passes, conclusive attempts) of one row: its trials, else its aggregation (clamped: a
    foreign row may claim 5 passes of 3), else the row itself."""
    if result.execution_status not in _CONCLUSIVE or result.verdict == "skip":
        return 0, 0
    done = [t for t in result.trials if t.execution_status in _CONCLUSIVE and t.verdict != "skip"]
    if done:
        return sum(1 for t in done if t.verdict == "pass"), len(done)
    agg = result.aggregation
    if agg is not None and agg.total_attempts > 1:
        return min(max(agg.passed_attempts, 0), agg.total_attempts), agg.total_attempts
    return (1 if result.verdict == "pass" else 0), 1


def measure_flakiness(runs: Iterable[Iterable[TestResult]]) -> FlakinessReport:
    """Fold `runs` (oldest first; each one row per test x target, attempts merged) into a report."""
    tallies: dict[Key, _Tally] = {}
    seen: dict[Key, None] = {}
    count = 0
    for rows in runs:
        count += 1
        for row in rows:
            key = (row.suite, row.test_id, row.target)
            seen[key] = None
            passes, attempts = attempt_counts(row)
            if not attempts:
                continue
            tally = tallies.setdefault(key, _Tally())
            if row.fingerprint and tally.fingerprint and row.fingerprint != tally.fingerprint:
                tally = tallies[key] = _Tally()  # a new definition: another test from here on
            verdict = row.verdict == "pass"
            tally.flips += tally.last is not None and tally.last != verdict
            tally.last = verdict
            tally.runs += 1
            tally.runs_passed += verdict
            tally.attempts += attempts
            tally.passes += passes
            tally.fingerprint = row.fingerprint or tally.fingerprint
    tests = [_record(key, tally) for key, tally in tallies.items()]
    tests.sort(key=lambda t: (_ORDER[t.label], t.suite, t.test_id, t.target))
    unmeasured = [f"{s}/{t} [{g}]" for (s, t, g) in seen if (s, t, g) not in tallies]
    return FlakinessReport(tests=tests, unmeasured=sorted(unmeasured), runs=count)


def _record(key: Key, tally: _Tally) -> TestFlakiness:
    label: Label = "flaky"
    if tally.passes == tally.attempts:
        label = "stable-pass"
    elif tally.passes == 0:
        label = "stable-fail"
    return TestFlakiness(
        suite=key[0],
        test_id=key[1],
        target=key[2],
        label=label,
        runs=tally.runs,
        runs_passed=tally.runs_passed,
        attempts=tally.attempts,
        passes=tally.passes,
        flips=tally.flips,
        pass_rate=tally.passes / tally.attempts,
        interval=wilson_interval(tally.passes, tally.attempts),
        fingerprint=tally.fingerprint,
    )
