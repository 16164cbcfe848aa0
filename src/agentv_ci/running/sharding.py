"""Stable shards: a test lands in the same shard on every machine and every run."""

from __future__ import annotations

import hashlib
import re

from agentv_ci.errors import UsageError

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def parse_shard(text: str) -> tuple[int, int]:
    """`"i/n"` (1-based) -> (i, n)."""
    match = _SHARD.match(text)
    if not match:
        raise UsageError(f"--shard {text!r} is not of the form i/n", hint="e.g. --shard 1/4")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or not 1 <= index <= count:
        raise UsageError(f"--shard {text!r}: need 1 <= i <= n", hint="e.g. --shard 2/4")
    return index, count


def shard_of(suite: str, test_id: str, count: int) -> int:
    """The 1-based shard of a test, from a hash of suite + test id (not Python's salted `hash`)."""
    digest = hashlib.blake2b(f"{suite}\0{test_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % count + 1
