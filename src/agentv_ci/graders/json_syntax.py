"""Whether a text is one JSON value, as `JSON.parse` decides, at any depth.

Python's decoder recurses and gives up near 1,000 levels; V8's `JSON.parse` accepts 100,000. This
checker keeps its nesting on a list instead of the call stack and builds nothing, so a deep answer
costs memory linear in its length, like the text itself.
"""

from __future__ import annotations

import re

__all__ = ["json_syntax_error"]

_SPACE = re.compile(r"[ \t\n\r]*")  # JSON's whitespace: not U+00A0, U+FEFF or any other
_SCALAR = re.compile(
    r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"'
    r"|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
    r"|true|false|null"
)
_KEY = re.compile(r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"')


def json_syntax_error(text: str) -> str | None:
    """None when `text` is exactly one JSON value (with JSON whitespace around it), else what is
    wrong and where (`expected a value at character 12`)."""
    closers: list[str] = []
    at = _SPACE.match(text, 0).end()  # type: ignore[union-attr]
    while True:
        # a value starts at `at`
        char = text[at : at + 1]
        if char in ("[", "{"):
            at = _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
            closer = "]" if char == "[" else "}"
            if text.startswith(closer, at):
                at += 1
            else:
                closers.append(closer)
                if closer == "}":
                    key = _member_key(text, at)
                    if isinstance(key, str):
                        return key
                    at = key
                continue
        else:
            scalar = _SCALAR.match(text, at)
            if scalar is None:
                return f"expected a JSON value at character {at}"
            at = scalar.end()
        # after a value: a separator, a closer, or the end
        while True:
            at = _SPACE.match(text, at).end()  # type: ignore[union-attr]
            if not closers:
                return None if at == len(text) else f"unexpected text after the JSON value at character {at}"
            char = text[at : at + 1]
            if char == closers[-1]:
                closers.pop()
                at += 1
                continue
            if char != ",":
                return f"expected ',' or '{closers[-1]}' at character {at}"
            at = _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
            if closers[-1] == "}":
                key = _member_key(text, at)
                if isinstance(key, str):
                    return key
                at = key
            break


def _member_key(text: str, at: int) -> int | str:
    """Past `"key" :` and the space after it, or what is wrong."""
    key = _KEY.match(text, at)
    if key is None:
        return f"expected a property name in double quotes at character {at}"
    at = _SPACE.match(text, key.end()).end()  # type: ignore[union-attr]
    if not text.startswith(":", at):
        return f"expected ':' at character {at}"
    return _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
