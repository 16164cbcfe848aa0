"""Which test keys a streamed dataset has already had, in 8 bytes a test (no key is kept).

A run checks every test of a JSONL dataset before anything runs, then reads the dataset again as it
runs (suite_reader): holding the ids of a million tests to find duplicates would cost about 100 MB,
so only a 64-bit hash of each is kept, in an open-addressing table of integers. A repeated hash means
a duplicate id (or, about once in 10^10 runs of a million tests, two ids with the same hash): the
loader then checks the suite exactly, the way it checks a suite held in memory, so every duplicate is
reported as it always was and a mere hash collision reports nothing.
"""

from __future__ import annotations

from array import array

__all__ = ["SeenKeys"]

_MASK64 = (1 << 64) - 1


class SeenKeys:
    """A set of 64-bit hashes of strings: `add` answers whether the string's hash was there."""

    __slots__ = ("_mask", "_slots", "_used")

    def __init__(self, capacity: int = 1024) -> None:
        size = 1024
        while size * 3 < capacity * 4:
            size *= 2
        self._slots: array[int] = array("Q", bytes(8 * size))  # 0: an empty slot
        self._mask = size - 1
        self._used = 0

    def __len__(self) -> int:
        return self._used

    def add(self, key: str) -> bool:
        """Record `key`; True when a key with the same hash was recorded before."""
        value = hash(key) & _MASK64 or 1
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
