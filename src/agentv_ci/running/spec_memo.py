"""A value per set of grader specs, worked out once.

A suite's graders are the same spec objects in each of its tests (running/spooled_tests.py), so what
depends only on them (the fingerprint's grader part, the answer lane's built graders) is keyed by their
identities. The specs are held with the value, so an id is never another object's while it is cached;
past `LIMIT` sets (tests with graders of their own) the memo starts again, to keep memory flat.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from agentv_ci.model.suite import GraderSpec

__all__ = ["LIMIT", "BySpecs"]

LIMIT = 1024

T = TypeVar("T")


class BySpecs(Generic[T]):
    """`make()`'s value for `specs` (and whatever else `scope` says it depends on), made once."""

    def __init__(self) -> None:
        self._values: dict[tuple[Hashable, ...], tuple[list[GraderSpec], T]] = {}
        # The last answer, its specs held (so `is` is never another list's identity): a suite's tests
        # ask in a row.
        self._last: tuple[tuple[Hashable, ...], list[GraderSpec], T] | None = None

    def of(self, scope: tuple[Hashable, ...], specs: list[GraderSpec], make: Callable[[], T]) -> T:
        last = self._last
        if last is not None and last[1] is specs and last[0] == scope:
            return last[2]
        key = (*scope, *map(id, specs))
        cached = self._values.get(key)
        if cached is None:
            if len(self._values) >= LIMIT:
                self._values.clear()
            cached = self._values[key] = (specs, make())
        self._last = (scope, specs, cached[1])
        return cached[1]
