"""How deep a JSON text nests, found without decoding it: a value nested thousands of levels deep
exhausts the decoder's stack, so every reader of untrusted JSON (datasets, results rows, summaries,
event files, artifacts) measures first and refuses with a located error."""

from __future__ import annotations

import re

MAX_JSON_DEPTH = 200
_STRUCTURE = re.compile(rb'["\\\[\]{}]')


def deep_json_offset(data: bytes, limit: int) -> int | None:
    """The byte offset where JSON text `data` opens its (limit+1)-th nested level, or None when it
    never gets that deep. Strings are skipped, so brackets inside them do not count; the text need
    not be valid JSON. Linear and without recursion."""
    depth = 0
    in_string = False
    escaped_at = -1  # the position of the character a backslash escapes
    for match in _STRUCTURE.finditer(data):
        start = match.start()
        if start == escaped_at:
            continue
        char = data[start]
        if in_string:
            if char == 0x5C:  # backslash
                escaped_at = start + 1
            elif char == 0x22:  # quote
                in_string = False
        elif char == 0x22:
            in_string = True
        elif char in (0x7B, 0x5B):  # { [
            depth += 1
            if depth > limit:
                return start
        elif char in (0x7D, 0x5D):  # } ]
            depth -= 1
    return None


def too_deep(data: bytes, limit: int = MAX_JSON_DEPTH) -> int | None:
    """`deep_json_offset`, after cheap checks that clear almost every text at once: more than `limit`
    levels take more than `limit` opening brackets, so more than `limit` bytes."""
    if len(data) <= limit or data.count(b"{") + data.count(b"[") <= limit:
        return None
    return deep_json_offset(data, limit)


# msgspec writes integers of up to 64 bits (signed or unsigned), and JavaScript reads no integer past
# 2**53 exactly: a larger one in a dataset, an eval file or a results file is refused where it stands.
MIN_INT = -(2**63)
MAX_INT = 2**64 - 1
# Each digit byte -> b"0", every other byte -> b" ": a run of 19 digits is then a plain substring search
# (two C passes; a regex for it tries each position and cost ~2.5 µs a dataset line).
_DIGITS_AS_ZERO = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_LONG_RUN = b"0" * 19


def oversized_int(value: object) -> int | None:
    """The first integer in a decoded JSON value outside [MIN_INT, MAX_INT], or None. Iterative."""
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is int:
            if not MIN_INT <= item <= MAX_INT:
                return item
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def may_hold_oversized_int(data: bytes) -> bool:
    """False when JSON text `data` surely holds no integer past 64 bits (no run of 19 digits)."""
    return _LONG_RUN in data.translate(_DIGITS_AS_ZERO)


def describe_int(value: int) -> str:
    """`99999999...` (about N digits) without str() of a huge int (Python refuses past 4,300 digits)."""
    digits = int(value.bit_length() * 0.30103) + 1
    if digits > 40:
        return f"an integer of about {digits} digits"
    return f"the integer {value}"
