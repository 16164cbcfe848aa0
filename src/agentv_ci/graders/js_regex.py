"""JavaScript `new RegExp(pattern, flags)` semantics on Python's `re` (AgentV evaluates regexes in JS).

The pattern is rewritten token by token where the two engines disagree:

- `\\d`, `\\w`, `\\b` (and negations) are ASCII-only in JS: `\\w` does not match `é`;
- `$` without the `m` flag matches only at the very end (Python also matches before a final newline);
- `.` without the `s` flag excludes every JS line terminator (`\\r`, `\\u2028`, `\\u2029`, not just `\\n`);
- `(?<name>...)` / `\\k<name>` are named groups (Python spells them `(?P<name>...)` / `(?P=name)`);
- `[^]` matches any character and `[]` matches nothing.

- `{` that does not start a quantifier is a literal (`a{e<=1}`, `{,5}`).

Flags: `i`, `m`, `s` map over; `u`, `g`, `y`, `d` change nothing for a single `test()`.

Patterns compile with the `regex` module (in its `re`-compatible VERSION0 mode) rather than `re`: its
matches take a `timeout`, so a catastrophic pattern (`^(a|aa)+$`) against a hostile answer ends in a
grader error instead of hanging the run (see `graders.regex_search`).
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import regex

__all__ = ["JS_FLAGS", "MAX_PATTERN_CHARS", "compile_js_regex", "translate_js_regex"]

# The `regex` module prepares a pattern's literal text for fast search in time that grows with the
# square of its length or worse (a period-2 literal of 4000 characters: 13 s), holding the GIL and
# ignoring the match timeout, so no budget or signal can stop it. Longer patterns are refused.
MAX_PATTERN_CHARS = 1000
# The `re` values, which the `regex` module shares (it is imported when a pattern is first compiled).
JS_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "u": 0, "g": 0, "y": 0, "d": 0}
_QUANTIFIER = re.compile(r"\{\d+(?:,\d*)?\}")

_OUTSIDE = {
    "d": "[0-9]",
    "D": "[^0-9]",
    "w": "[A-Za-z0-9_]",
    "W": "[^A-Za-z0-9_]",
    "b": r"(?a:\b)",
    "B": r"(?a:\B)",
}
_INSIDE = {"d": "0-9", "w": "A-Za-z0-9_"}
_DOT = "[^\\n\\r\\u2028\\u2029]"


def _escape(pattern: str, i: int, in_class: bool) -> tuple[str, int]:
    """Translate the escape starting at pattern[i] == '\\'; returns (python text, next index)."""
    if i + 1 >= len(pattern):
        return "\\\\", i + 1
    char = pattern[i + 1]
    table = _INSIDE if in_class else _OUTSIDE
    if char in table:
        return table[char], i + 2
    if char == "k" and not in_class and pattern.startswith("<", i + 2):
        end = pattern.find(">", i + 3)
        if end > 0:
            return f"(?P={pattern[i + 3 : end]})", end + 1
    if char == "u" and pattern.startswith("{", i + 2):
        end = pattern.find("}", i + 3)
        if end > 0:
            return f"\\U{int(pattern[i + 3 : end], 16):08x}", end + 1
    if char.isalpha() and char not in "dDwWsSbBnrtfvuxcpPk0":
        # JS (without `u`) treats an unknown letter escape as the letter itself; Python rejects it.
        return re.escape(char), i + 2
    if char == "v":
        return "\\x0b", i + 2
    return pattern[i : i + 2], i + 2


def translate_js_regex(pattern: str, flags: str = "") -> str:
    """The Python spelling of a JS regex source, as described in the module docstring."""
    out: list[str] = []
    i, in_class = 0, False
    multiline, dotall = "m" in flags, "s" in flags
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            text, i = _escape(pattern, i, in_class)
            out.append(text)
            continue
        if in_class:
            if char == "]":
                in_class = False
            elif char == "[":
                char = "\\["  # a literal in JS; Python warns about nested sets
            out.append(char)
        elif pattern.startswith("[^]", i):
            out.append("[\\s\\S]")
            i += 3
            continue
        elif pattern.startswith("[]", i):
            out.append("(?!)")
            i += 2
            continue
        elif char == "[":
            in_class = True
            out.append(char)
        elif pattern.startswith("(?<", i) and i + 3 < len(pattern) and pattern[i + 3] not in "=!":
            out.append("(?P<")
            i += 3
            continue
        elif char == "$" and not multiline:
            out.append("\\Z")
        elif char == "." and not dotall:
            out.append(_DOT)
        elif char == "{" and not _QUANTIFIER.match(pattern, i):
            out.append("\\{")
        else:
            out.append(char)
        i += 1
    return "".join(out)


@functools.lru_cache(maxsize=1024)
def compile_js_regex(pattern: str, flags: str | None) -> regex.Pattern[str]:
    """`new RegExp(pattern, flags)` as a Python pattern. Raises ValueError when invalid.
    Cached: a suite-level regex is compiled once, not once per test."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ValueError(
            f"the pattern is {len(pattern)} characters long, more than the {MAX_PATTERN_CHARS} a regex may "
            "have (use `contains` or `equals` for long literal text)"
        )
    bits = 0
    for index, flag in enumerate(flags or ""):
        if flag not in JS_FLAGS:
            raise ValueError(f"unknown regex flag {flag!r} (use i, m, s, u)")
        if flag in (flags or "")[:index]:
            raise ValueError(f"duplicate regex flag {flag!r}")
        bits |= JS_FLAGS[flag]
    import regex

    try:
        return regex.compile(translate_js_regex(pattern, flags or ""), bits | regex.VERSION0)
    except (regex.error, OverflowError, RecursionError, ValueError) as exc:
        raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from None
