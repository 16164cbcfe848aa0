"""Why a failing test does not block: measured flakiness (`--history`) or a quarantine entry.

A `WaiverBook` is built by the commands from the base branch's history and quarantine file and read
by the gates (gating.py): a failing or regressed test with a `Waiver` that does not block is a note,
not a gate failure. An expired quarantine entry is a waiver that blocks: the failure stands, and its
reason names the entry's owner and why it was quarantined.
"""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["ANY_TARGET", "Waiver", "WaiverBook", "waiver_key"]

ANY_TARGET = "*"  # a quarantine entry without a target covers every target of the test

WaiverKind = Literal["flaky", "quarantined", "expired"]


def waiver_key(suite: str, test_id: str, target: str) -> str:
    return f"{suite}/{test_id} [{target}]"


class Waiver(msgspec.Struct, frozen=True):
    """`text` is what the reports say, e.g. "flaky: failed now; passed 3 of 5 runs on main"."""

    kind: WaiverKind
    text: str

    @property
    def blocks(self) -> bool:
        return self.kind == "expired"


class WaiverBook(msgspec.Struct, frozen=True):
    """Waivers by `waiver_key` (target `ANY_TARGET` for every target), and notes about the sources
    (e.g. a quarantine entry that exists only in the pull request and so has no effect)."""

    tests: dict[str, Waiver] = {}
    notes: list[str] = []

    def lookup(self, suite: str, test_id: str, target: str) -> Waiver | None:
        if not self.tests:
            return None
        found = self.tests.get(waiver_key(suite, test_id, target))
        return found if found is not None else self.tests.get(waiver_key(suite, test_id, ANY_TARGET))

    def merged(self, other: WaiverBook) -> WaiverBook:
        """Both books; where both hold a key, a quarantine entry (or its expiry) wins over flakiness."""
        tests = dict(self.tests)
        for key, waiver in other.tests.items():
            mine = tests.get(key)
            if mine is None or (mine.kind == "flaky" and waiver.kind != "flaky"):
                tests[key] = waiver
        return WaiverBook(tests=tests, notes=[*self.notes, *other.notes])
