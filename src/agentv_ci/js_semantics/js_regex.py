"""JavaScript `new RegExp(pattern, flags)` semantics on Python's `regex` (AgentV evaluates regexes in JS).

The pattern is parsed token by token and every character set is spelled out, because the two engines
disagree on most of them:

- Without `u`, JS works on UTF-16 code units: `.` and `[^x]` match half of an emoji, and a quantifier
  after an emoji repeats its second half. The pattern and the answer are both turned into code units
  (`js_subject`), and match offsets are mapped back (`span_in_text`). With `u`, code points.
- `\\d`, `\\w`, `\\b` are ASCII-only; `\\s` is JS's WhiteSpace and LineTerminator set (with U+FEFF,
  without U+001C-001F and U+0085, unlike Python's).
- The `i` flag folds case as JS does (`js_case_folding`): each letter becomes the class of the letters
  JS makes equal to it, so the Kelvin sign matches `k` only with `u`. A back-reference (`\\1`) stays
  case-sensitive: a known difference.
- `$` without `m` matches only at the very end; with `m`, `^`/`$` also match at `\\r`, U+2028, U+2029.
  `.` without `s` excludes every JS line terminator.
- `(?<name>...)` / `\\k<name>` are named groups; `[^]` matches anything and `[]` nothing; a `{` that
  does not start a quantifier is a literal (without `u`; with `u` it is an error, as in JS).

Flags `g`, `y`, `d` change nothing for a single `test()` (the caller handles `y`).

Patterns compile with the `regex` module (in its `re`-compatible VERSION0 mode) rather than `re`: its
matches take a `timeout`, so a catastrophic pattern (`^(a|aa)+$`) against a hostile answer ends in a
grader error instead of hanging the run (see `graders.regex_search`).
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from agentv_ci.js_semantics.js_case_folding import Ranges, case_group_of, close_under_case, merge_ranges

if TYPE_CHECKING:
    import regex

__all__ = [
    "JS_FLAGS",
    "MAX_PATTERN_CHARS",
    "compile_js_regex",
    "js_subject",
    "span_in_text",
    "translate_js_regex",
]

# The `regex` module prepares a pattern's literal text for fast search in time that grows with the
# square of its length or worse (a period-2 literal of 4000 characters: 13 s), holding the GIL and
# ignoring the match timeout, so no budget or signal can stop it. Longer patterns are refused.
MAX_PATTERN_CHARS = 1000
JS_FLAGS = frozenset("imsugyd")
_QUANTIFIER = re.compile(r"\{\d+(?:,\d*)?\}")
_HEX2 = re.compile(r"[0-9A-Fa-f]{2}")
_HEX4 = re.compile(r"[0-9A-Fa-f]{4}")
_BRACED_HEX = re.compile(r"\{([0-9A-Fa-f]{1,6})\}")
_OCTAL = re.compile(r"[0-3]?[0-7]{1,2}|[0-7]")
_SYNTAX = set("^$\\.*+?()[]{}|/")
_GROUP_OPENING = re.compile(r"\(\?(?:[:=!]|<[=!]?)")

_DIGIT: Ranges = [(0x30, 0x39)]
_WORD: Ranges = [(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)]
# ECMA-262 WhiteSpace (with every Zs) and LineTerminator.
_SPACE: Ranges = [
    *((0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A)),
    *((0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000), (0xFEFF, 0xFEFF)),
]
_LINE_ENDS: Ranges = [(0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029)]
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")

# One parsed piece: a set of characters (with raw `regex` class text it cannot spell as ranges, such
# as `\p{L}`), or regex text emitted as it is (an assertion, a back-reference).
_Set = tuple[Ranges, str]


class _Translator:
    def __init__(self, pattern: str, flags: str) -> None:
        self.unicode = "u" in flags
        self.ignore_case = "i" in flags
        self.multiline = "m" in flags
        self.dotall = "s" in flags
        self.top = 0x10FFFF if self.unicode else 0xFFFF
        # With `u` and `i`, JS's word characters gain U+017F and U+212A (they fold into ASCII).
        self.word = close_under_case(_WORD, True) if self.unicode and self.ignore_case else _WORD
        self.source = pattern if self.unicode else js_subject(pattern, "")
        self.at = 0

    def fail(self, why: str, at: int | None = None) -> ValueError:
        return ValueError(f"{why} at position {self.at if at is None else at}")

    def complement(self, ranges: Ranges) -> Ranges:
        out: Ranges = []
        next_low = 0
        for low, high in merge_ranges(ranges):
            if low > next_low:
                out.append((next_low, low - 1))
            next_low = max(next_low, high + 1)
        if next_low <= self.top:
            out.append((next_low, self.top))
        return out

    def translate(self) -> str:
        out: list[str] = []
        source = self.source
        while self.at < len(source):
            char = source[self.at]
            if char == "\\":
                out.append(self.atom_escape())
                continue
            if char == "[":
                out.append(self.emit_set(*self.char_class(), closed=True))
                continue
            group = _GROUP_OPENING.match(source, self.at)
            if group and group.group() == "(?<":  # a named group: the name is copied as it is
                end = source.find(">", group.end())
                if end < 0:
                    raise self.fail("unterminated group name")
                out.append(f"(?P<{source[group.end() : end]}>")
                self.at = end + 1
                continue
            if group:
                out.append(group.group())
                self.at = group.end()
                continue
            self.at += 1
            if char in "()|*+?":
                out.append(char)
            elif char == "^":
                out.append("(?:\\A|(?<=[\\n\\r\\u2028\\u2029]))" if self.multiline else "\\A")
            elif char == "$":
                out.append("(?:\\Z|(?=[\\n\\r\\u2028\\u2029]))" if self.multiline else "\\Z")
            elif char == ".":
                dot = [(0, self.top)] if self.dotall else self.complement(_LINE_ENDS)
                out.append(self.emit_set(dot, "", closed=True))
            elif char == "{" and _QUANTIFIER.match(source, self.at - 1):
                end = source.index("}", self.at)
                out.append(source[self.at - 1 : end + 1])
                self.at = end + 1
            elif char in "{}]" and self.unicode:
                raise self.fail(f"lone {char!r}", self.at - 1)
            else:
                out.append(self.emit_char(ord(char)))
        return "".join(out)

    def atom_escape(self) -> str:
        source, at = self.source, self.at
        nxt = source[at + 1 : at + 2]
        if nxt in ("b", "B"):
            self.at += 2
            if self.unicode and self.ignore_case:  # the word set is not ASCII here
                word = self.emit_set(self.word, "", closed=True)
                boundary = f"(?:(?<={word})(?!{word})|(?<!{word})(?={word}))"
                return boundary if nxt == "b" else f"(?!{boundary})"
            return "(?a:\\b)" if nxt == "b" else "(?a:\\B)"
        if nxt.isdigit() and nxt != "0":
            end = at + 1
            while end < len(source) and source[end].isdigit():
                end += 1
            self.at = end
            return f"(?:\\{source[at + 1 : end]})"
        if nxt == "k" and source.startswith("<", at + 2) and source.find(">", at + 3) > 0:
            end = source.find(">", at + 3)
            self.at = end + 1
            return f"(?P={source[at + 3 : end]})"
        if self.unicode and nxt in ("p", "P") and source.startswith("{", at + 2):
            end = source.find("}", at + 3)
            if end < 0:
                raise self.fail("unterminated \\p{...}")
            self.at = end + 1
            return source[at : end + 1]
        piece = self.class_escape(in_class=False)
        # the sets of escapes hold no letter JS folds into another, or are closed already
        return self.emit_char(piece) if isinstance(piece, int) else self.emit_set(*piece, closed=True)

    def class_escape(self, *, in_class: bool) -> int | _Set:
        """The escape at `self.at` (a backslash): one character, or a set."""
        source, at = self.source, self.at
        if at + 1 >= len(source):
            raise self.fail("\\ at end of pattern", at)
        nxt = source[at + 1]
        self.at = at + 2
        sets = {"d": _DIGIT, "w": self.word, "s": _SPACE}
        if nxt.lower() in sets:
            chosen = sets[nxt.lower()]
            return (chosen if nxt.islower() else self.complement(chosen)), ""
        simple = {"n": 10, "r": 13, "t": 9, "f": 12, "v": 11}
        if nxt in simple:
            return simple[nxt]
        if nxt == "b" and in_class:
            return 8
        if self.unicode and in_class and nxt in ("p", "P") and source.startswith("{", at + 2):
            end = source.find("}", at + 3)
            if end < 0:
                raise self.fail("unterminated \\p{...}")
            self.at = end + 1
            return [], source[at : end + 1]
        if nxt == "c" and at + 2 < len(source) and source[at + 2].isascii() and source[at + 2].isalpha():
            self.at = at + 3
            return ord(source[at + 2]) % 32
        if nxt == "x" and _HEX2.match(source, at + 2):
            self.at = at + 4
            return int(source[at + 2 : at + 4], 16)
        if nxt == "u":
            return self.unicode_escape(at)
        if nxt == "0" and not source[at + 2 : at + 3].isdigit():
            return 0
        if nxt.isdigit() and not self.unicode:  # a legacy octal escape (in a class, or `\0nn`)
            found = _OCTAL.match(source, at + 1)
            if found:
                self.at = found.end()
                return int(found.group(), 8)
            return ord(nxt)
        if nxt == "c" and not self.unicode:  # `\c` without a letter is a backslash and a `c`
            self.at = at + 1
            return ord("\\")
        if self.unicode and nxt not in _SYNTAX and not (in_class and nxt == "-"):
            raise self.fail(f"invalid escape \\{nxt}", at)
        return ord(nxt)  # an identity escape: the character itself

    def unicode_escape(self, at: int) -> int:
        source = self.source
        if self.unicode:
            braced = _BRACED_HEX.match(source, at + 2)
            if braced:
                self.at = braced.end()
                code = int(braced.group(1), 16)
                if code > 0x10FFFF:
                    raise self.fail("\\u{...} past U+10FFFF")
                return code
        if not _HEX4.match(source, at + 2):
            if self.unicode:
                raise self.fail("invalid \\u escape")
            return ord("u")
        code = int(source[at + 2 : at + 6], 16)
        self.at = at + 6
        if self.unicode and 0xD800 <= code <= 0xDBFF and source.startswith("\\u", at + 6):
            trail = source[at + 8 : at + 12]
            if _HEX4.fullmatch(trail) and 0xDC00 <= int(trail, 16) <= 0xDFFF:
                self.at = at + 12
                return 0x10000 + ((code - 0xD800) << 10) + (int(trail, 16) - 0xDC00)
        return code

    def char_class(self) -> tuple[Ranges, str]:
        """The class starting at `self.at` (a `[`), as ranges already closed under `i` and negated."""
        source = self.source
        self.at += 1
        negated = source.startswith("^", self.at)
        self.at += negated
        ranges: Ranges = []
        raw = ""
        while True:
            if self.at >= len(source):
                raise self.fail("unterminated character class")
            if source[self.at] == "]":
                self.at += 1
                break
            low = self.class_atom()
            if source.startswith("-", self.at) and source[self.at + 1 : self.at + 2] not in ("]", ""):
                self.at += 1
                high = self.class_atom()
                if isinstance(low, int) and isinstance(high, int):
                    if high < low:
                        raise self.fail("range out of order in character class")
                    ranges.append((low, high))
                    continue
                if self.unicode:
                    raise self.fail("a set cannot bound a range")
                ranges.append((ord("-"), ord("-")))  # legacy: `[\w-a]` is \w, `-`, `a`
                for item in (low, high):
                    ranges += [(item, item)] if isinstance(item, int) else item[0]
                    raw += "" if isinstance(item, int) else item[1]
                continue
            if isinstance(low, int):
                ranges.append((low, low))
            else:
                ranges += low[0]
                raw += low[1]
        ranges = merge_ranges(ranges)
        if self.ignore_case:
            ranges = close_under_case(ranges, self.unicode)
        if negated and raw:
            return [], f"^{_class_body(ranges)}{raw}"
        return (self.complement(ranges) if negated else ranges), raw

    def class_atom(self) -> int | _Set:
        if self.source[self.at] == "\\":
            return self.class_escape(in_class=True)
        self.at += 1
        return ord(self.source[self.at - 1])

    def emit_char(self, code: int) -> str:
        group = case_group_of(self.unicode).get(code) if self.ignore_case else None
        return self.emit_set([(c, c) for c in group], "", closed=True) if group else _literal(code)

    def emit_set(self, ranges: Ranges, raw: str, *, closed: bool = False) -> str:
        """A set as a Python class (closed under `i` here unless `closed` says it already is)."""
        if raw.startswith("^"):  # a negated class holding `\p{...}`
            return f"[{raw}]"
        ranges = merge_ranges(ranges)
        if self.ignore_case and not closed:
            ranges = close_under_case(ranges, self.unicode)
        if not ranges and not raw:
            return "(?!)"
        if ranges == [(0, self.top)]:
            return "[\\s\\S]"
        if len(ranges) == 1 and ranges[0][0] == ranges[0][1] and not raw:
            return _literal(ranges[0][0])
        return f"[{_class_body(ranges)}{raw}]"


def _escaped(code: int) -> str:
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _literal(code: int) -> str:
    char = chr(code)
    return char if char.isascii() and char.isalnum() else _escaped(code)


def _class_body(ranges: Ranges) -> str:
    return "".join(_escaped(lo) if lo == hi else f"{_escaped(lo)}-{_escaped(hi)}" for lo, hi in ranges)


def translate_js_regex(pattern: str, flags: str = "") -> str:
    """The Python spelling of a JS regex source, as described in the module docstring; it matches
    `js_subject(text, flags)`. Raises ValueError where JS raises a SyntaxError it checks here."""
    return _Translator(pattern, flags).translate()


def js_subject(text: str, flags: str | None) -> str:
    """What a pattern compiled for `flags` searches: `text` in UTF-16 code units without `u` (each
    character past U+FFFF as its two surrogates), `text` itself with `u`."""
    if "u" in (flags or "") or text.isascii() or not _ASTRAL.search(text):
        return text
    return _ASTRAL.sub(_surrogates, text)


def _surrogates(found: re.Match[str]) -> str:
    code = ord(found.group()) - 0x10000
    return chr(0xD800 + (code >> 10)) + chr(0xDC00 + (code & 0x3FF))


def span_in_text(text: str, subject: str, start: int, end: int) -> tuple[int, int]:
    """A match's `start`/`end` in `subject` (from `js_subject(text, ...)`) as offsets in `text`,
    widened to whole characters where a match took half a surrogate pair."""
    if subject is text:
        return start, end

    def position(index: int, widen: bool) -> int:
        before = index - len(_PAIR.findall(subject, 0, index))  # characters, a split pair's half included
        split = 0 < index < len(subject) and _PAIR.match(subject, index - 1) is not None
        return before - 1 if split and not widen else before

    return position(start, False), position(end, True)


@functools.lru_cache(maxsize=1024)
def compile_js_regex(pattern: str, flags: str | None) -> regex.Pattern[str]:
    """`new RegExp(pattern, flags)` as a Python pattern that searches `js_subject(text, flags)`.
    Raises ValueError when invalid. Cached: a suite-level regex is compiled once, not once per test."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ValueError(
            f"the pattern is {len(pattern)} characters long, more than the {MAX_PATTERN_CHARS} a regex may "
            "have (use `contains` or `equals` for long literal text)"
        )
    for index, flag in enumerate(flags or ""):
        if flag not in JS_FLAGS:
            raise ValueError(f"unknown regex flag {flag!r} (use i, m, s, u)")
        if flag in (flags or "")[:index]:
            raise ValueError(f"duplicate regex flag {flag!r}")
    import regex  # imported when a pattern is first compiled (start-up time)

    try:
        return regex.compile(translate_js_regex(pattern, flags or ""), regex.VERSION0)
    except (regex.error, OverflowError, RecursionError, ValueError) as exc:
        raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from None
