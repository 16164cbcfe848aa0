"""The hashes of a streamed dataset's test keys: a repeated key is found however many came before
it, in the small set and in the table the hashes move to past `SMALL_KEYS`."""

from __future__ import annotations

from agentv_ci.loading import seen_keys
from agentv_ci.loading.seen_keys import SeenKeys


def test_a_repeated_key_is_found_before_and_after_the_hashes_move_to_the_table() -> None:
    count = seen_keys.SMALL_KEYS * 3
    seen = SeenKeys()
    for i in range(count):
        assert not seen.add(f"suite\x00t{i}")
        if i in (10, seen_keys.SMALL_KEYS - 1, seen_keys.SMALL_KEYS + 1, count - 1):
            assert seen.add(f"suite\x00t{i}")  # the key just added
            assert seen.add("suite\x00t0")  # the first one
    assert len(seen) == count
    assert all(seen.add(f"suite\x00t{i}") for i in range(0, count, 997))
    assert not seen.add("other\x00t0")
