"""JSON value helpers shared by structured graders: JavaScript-like deep equality and path lookup."""

from __future__ import annotations

import re
from typing import Any

MISSING: Any = object()
_SEGMENT = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def deep_equal(a: Any, b: Any) -> bool:
    """Structural equality where booleans never equal numbers (`true != 1`, as in JavaScript)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(deep_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(deep_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and bool(a == b)


def get_path(value: Any, path: str) -> Any:
    """`a.b[0].c` (dots and `[i]` indexes; numeric dot segments index lists too). MISSING if absent."""
    current = value
    for match in _SEGMENT.finditer(path):
        key, index = match.group(1), match.group(2)
        if index is not None or (key is not None and key.isdigit() and isinstance(current, list)):
            position = int(index if index is not None else key)
            if not isinstance(current, list) or position >= len(current):
                return MISSING
            current = current[position]
        elif isinstance(current, dict) and key in current:
            current = current[key]
        else:
            return MISSING
    return current
