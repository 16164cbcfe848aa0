"""A value per set of grader specs, worked out once.

A suite's graders are the same spec objects in each of its tests (running/spooled_tests.py), so what
depends only on them (the fingerprint's grader part, the answer lane's built graders) is keyed by their
identities. The specs are held with the value, so an id is never another object's while it is cached;
past `LIMIT` sets (tests with graders of their own) the memo starts again, to keep memory flat.
Graders written alike in many tests (inline checks in each test of a YAML file) are specs of each
test's own; `content_key` gives them one key, their places left out.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from operator import itemgetter
from typing import Generic, TypeVar

import msgspec
from msgspec.structs import astuple

from agentv_ci.model.suite import GraderSpec

__all__ = ["LIMIT", "BySpecs", "content_key"]

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


# Every field of a spec but where it was written: what a built grader's results can depend on.
_CONTENT = itemgetter(
    *(i for i, f in enumerate(GraderSpec.__struct_fields__) if f not in ("location", "config_locations"))
)


def content_key(specs: list[GraderSpec]) -> bytes | None:
    """The specs as written, their places left out (types kept apart: `1`, `1.0` and `true` differ);
    None when a value cannot be encoded. Specs written alike in many tests (inline text checks
    repeated in every test of a YAML file) have one key."""
    try:
        return msgspec.msgpack.encode([_CONTENT(astuple(spec)) for spec in specs])
    except (TypeError, ValueError, OverflowError):
        return None
