"""The waivers `--history` gives the gates: a test the base branch's runs label flaky informs, its
failure now does not block (gating.py); a stable test that fails blocks as before.

A test whose definition differs now from the one history measured (fingerprints) gets no waiver:
its history is another test's. Which runs are history is the caller's word (`--history` on the
command line) or the Action's (artifacts of base-branch runs only, so a pull request cannot write
its own).
"""

from __future__ import annotations

from collections.abc import Iterable

from agentv_ci.history.flakiness import FlakinessReport, TestFlakiness
from agentv_ci.model.result import TestResult
from agentv_ci.model.waivers import Waiver, WaiverBook, waiver_key

__all__ = ["BASE_BRANCH", "flaky_waivers", "with_flaky_waivers"]

BASE_BRANCH = "on the base branch"  # `--history` on the command line: the user says where the runs come from


def flaky_waivers(report: FlakinessReport, current: Iterable[TestResult], where: str) -> WaiverBook:
    """A `Waiver("flaky", ...)` per test `report` labels flaky that ran now with the same definition;
    `where` ends the text ("on main": "flaky: failed now; passed 3 of 5 runs on main")."""
    flaky = {(t.suite, t.test_id, t.target): t for t in report.tests if t.label == "flaky"}
    tests: dict[str, Waiver] = {}
    changed: list[str] = []
    if flaky:
        for row in current:
            measured = flaky.get((row.suite, row.test_id, row.target))
            if measured is None:
                continue
            if row.fingerprint and measured.fingerprint and row.fingerprint != measured.fingerprint:
                changed.append(measured.name)
                continue
            tests[waiver_key(row.suite, row.test_id, row.target)] = Waiver("flaky", _text(measured, where))
    notes = [f"history: {report.runs} run(s) {where}, {len(flaky)} test(s) labelled flaky"]
    if changed:
        names = ", ".join(changed[:5]) + (" ..." if len(changed) > 5 else "")
        notes.append(f"history not applied to {len(changed)} test(s) whose definition changed since: {names}")
    return WaiverBook(tests=tests, notes=notes)


def _text(measured: TestFlakiness, where: str) -> str:
    return f"flaky: failed now; passed {measured.runs_passed} of {measured.runs} runs {where}"


def with_flaky_waivers(
    book: WaiverBook | None, report: FlakinessReport | None, current: Iterable[TestResult], where: str
) -> WaiverBook | None:
    """`book` (e.g. the quarantine's) with the flaky waivers of `report` added; a quarantine entry
    wins where both name a test. Unchanged when there is no history."""
    if report is None:
        return book
    flaky = flaky_waivers(report, current, where)
    return flaky if book is None else flaky.merged(book)
