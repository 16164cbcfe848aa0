"""Which test keys a streamed dataset has already had, in 8 bytes a test (no key is kept).

A run checks every test of a JSONL dataset before anything runs, then reads the dataset again as it
runs (suite_reader): holding the ids of a million tests to find duplicates would cost about 100 MB,
so only a 64-bit hash of each is kept, in an open-addressing table of integers. A repeated hash means
a duplicate id (or, about once in 10^10 runs of a million tests, two ids with the same hash): the
loader then checks the suite exactly, the way it checks a suite held in memory, so every duplicate is
reported as it always was and a mere hash collision reports nothing.

The hashes of a suite's first `SMALL_KEYS` tests are kept in a set (its lookup is several times
cheaper than the table's, probed in Python); past that they move to the table, so a dataset of any
size costs 8 bytes a test.
"""

from __future__ import annotations

from array import array

__all__ = ["SeenKeys"]

_MASK64 = (1 << 64) - 1
SMALL_KEYS = 1 << 12  # a set of this many hashes is about 0.3 MB: peak memory stays as it was


class SeenKeys:
    """A set of 64-bit hashes of strings: `add` answers whether the string's hash was there."""

    __slots__ = ("_mask", "_slots", "_small", "_used")

    def __init__(self) -> None:
        self._small: set[int] | None = set()  # None once the hashes moved to the table
        self._slots: array[int] = array("Q")  # 0: an empty slot
        self._mask = 0
        self._used = 0

    def __len__(self) -> int:
        return self._used if self._small is None else len(self._small)

    def add(self, key: str) -> bool:
        """Record `key`; True when a key with the same hash was recorded before."""
        value = hash(key) & _MASK64 or 1
        small = self._small
        if small is None:
            return self._add_to_table(value)
        if value in small:
            return True
        small.add(value)
        if len(small) > SMALL_KEYS:
            self._to_table(small)
        return False

    def _to_table(self, small: set[int]) -> None:
        size = 1024
        while size * 3 < len(small) * 8:  # a quarter full at most after the move
            size *= 2
        self._slots, self._mask, self._small = array("Q", bytes(8 * size)), size - 1, None
        for value in small:
            self._add_to_table(value)

    def _add_to_table(self, value: int) -> bool:
        slots, mask = self._slots, self._mask
        index = value & mask
        while True:
            found = slots[index]
            if found == 0:
                slots[index] = value
                self._used += 1
                if self._used * 4 > len(slots) * 3:
                    self._grow()
                return False
            if found == value:
                return True
            index = (index + 1) & mask

    def _grow(self) -> None:
        old = self._slots
        size = len(old) * 2
        slots: array[int] = array("Q", bytes(8 * size))
        mask = size - 1
        for value in old:
            if value:
                index = value & mask
                while slots[index]:
                    index = (index + 1) & mask
                slots[index] = value
        self._slots, self._mask = slots, mask
