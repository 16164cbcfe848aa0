"""`new Date(text)` as V8 (Node) reads a string, pinned to UTC as the machine's zone.

A port of the algorithm of V8's `DateParser` (ES5 ISO date-time strings first, then its legacy
parser for anything else), written from its documented rules and checked against node by
tests/conformance/field_accuracy_js: `03/05/24` is 5 March 2024 (two-digit years 00-49 are 2000s,
50-99 are 1900s), `Mar 5` is 2001, `20240305` is no date, `2024-02-30` is 1 March, a date-only ISO
string is UTC, and a string without a zone is local time, which is UTC here.

`js_date_ms(text)` is the time value in milliseconds, or None where JavaScript gives NaN.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentv_ci.js_semantics.js_calendar import days_from_civil

MAX_TIME_MS = 8.64e15
_MAX_DIGITS = 9  # V8 keeps the first nine significant digits of a numeral
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_ZONES = {"ut": 0, "utc": 0, "z": 0, "gmt": 0, "cdt": -5, "cst": -6, "edt": -4, "est": -5}
_ZONES |= {"mdt": -6, "mst": -7, "pdt": -7, "pst": -8}
# JavaScript's WhiteSpace and LineTerminator characters.
JS_SPACE = frozenset(
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


@dataclass
class _Token:
    kind: str  # number | symbol | word | space | unknown | end
    value: int | str = 0
    length: int = 0
    word_type: str = ""  # month | ampm | zone | t | "" (not a keyword)
    word_value: int = 0

    def is_symbol(self, ch: str) -> bool:
        return self.kind == "symbol" and self.value == ch

    def is_sign(self) -> bool:
        return self.kind == "symbol" and self.value in ("+", "-")

    def fixed(self, n: int) -> bool:
        return self.kind == "number" and self.length == n

    def is_z(self) -> bool:
        return self.kind == "word" and self.word_type == "zone" and self.length == 1

    def number(self) -> int:
        return int(self.value)


def _keyword(word: str) -> tuple[str, int]:
    prefix = "".join(chr(ord(c) | 0x20) if c.isascii() else c for c in word[:3])
    if prefix in _MONTHS:
        return "month", _MONTHS.index(prefix) + 1
    if len(word) > 3:
        return "", 0
    if prefix in ("am", "pm"):
        return "ampm", 0 if prefix == "am" else 12
    if prefix in _ZONES:
        return "zone", _ZONES[prefix]
    if prefix == "t":
        return "t", 0
    return "", 0


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if "0" <= ch <= "9":
            start = i
            while i < n and text[i] == "0":
                i += 1
            value, digits = 0, 0
            while i < n and "0" <= text[i] <= "9":
                if digits < _MAX_DIGITS:
                    value = value * 10 + int(text[i])
                digits += 1
                i += 1
            out.append(_Token("number", value, i - start))
        elif ch in ":-+.)":
            out.append(_Token("symbol", ch, 1))
            i += 1
        elif ch >= "A" and ch not in JS_SPACE:
            start = i
            while i < n and text[i] >= "A" and text[i] not in JS_SPACE:
                i += 1
            kind, value = _keyword(text[start:i])
            out.append(_Token("word", text[start:i], i - start, kind, value))
        elif ch in JS_SPACE:
            out.append(_Token("space", ch, 1))
            i += 1
        elif ch == "(":
            balance = 0
            while True:
                if text[i] == ")":
                    balance -= 1
                elif text[i] == "(":
                    balance += 1
                i += 1
                if balance <= 0 or i >= n:
                    break
            out.append(_Token("unknown"))
        else:
            out.append(_Token("unknown"))
            i += 1
    return out


class _Scanner:
    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.pos = 0

    def peek(self) -> _Token:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else _Token("end")

    def next(self) -> _Token:
        token = self.peek()
        self.pos += 1
        return token

    def skip(self, ch: str) -> bool:
        if self.peek().is_symbol(ch):
            self.pos += 1
            return True
        return False


class _Invalid(Exception):
    pass


@dataclass
class _Parts:
    day: list[int]
    named_month: int | None = None
    iso: bool = False
    time: list[int] | None = None
    hour_offset: int | None = None
    tz_sign: int | None = None
    tz_hour: int | None = None
    tz_minute: int | None = None

    def __post_init__(self) -> None:
        self.time = []

    @property
    def clock(self) -> list[int]:
        assert self.time is not None
        return self.time

    def time_expecting(self, n: int) -> bool:
        k = len(self.clock)
        return (k == 1 and 0 <= n <= 59) or (k == 2 and 0 <= n <= 59) or (k == 3 and 0 <= n <= 999)

    def time_add(self, n: int) -> bool:
        if len(self.clock) >= 4:
            return False
        self.clock.append(n)
        return True

    def time_final(self, n: int) -> bool:
        if not self.time_add(n):
            return False
        self.clock.extend([0] * (4 - len(self.clock)))
        return True

    def tz_set(self, hours: int) -> None:
        self.tz_sign, self.tz_hour, self.tz_minute = (-1 if hours < 0 else 1), abs(hours), 0

    def tz_expecting(self, n: int) -> bool:
        return self.tz_hour is not None and self.tz_minute is None and 0 <= n <= 59

    def tz_utc(self) -> bool:
        return self.tz_hour == 0 and self.tz_minute == 0


def _millis(token: _Token) -> int:
    number, length = token.number(), token.length
    if length == 1:
        return number * 100
    if length == 2:
        return number * 10
    length = min(length, _MAX_DIGITS)
    while length > 3:
        number //= 10
        length -= 1
    return number


def _es5(scan: _Scanner, parts: _Parts) -> _Token:
    """The ES5 date-time prefix; returns the first token it leaves to the legacy parser."""
    if scan.peek().is_sign():
        sign = scan.next()
        if not scan.peek().fixed(6):
            return sign
        year = scan.next().number()
        if sign.value == "-" and year == 0:
            return sign
        parts.day.append(-year if sign.value == "-" else year)
    elif scan.peek().fixed(4):
        parts.day.append(scan.next().number())
    else:
        return scan.next()
    if scan.skip("-"):
        if not scan.peek().fixed(2) or not 1 <= scan.peek().number() <= 12:
            return scan.next()
        parts.day.append(scan.next().number())
        if scan.skip("-"):
            if not scan.peek().fixed(2) or not 1 <= scan.peek().number() <= 31:
                return scan.next()
            parts.day.append(scan.next().number())
    if not (scan.peek().kind == "word" and scan.peek().word_type == "t"):
        if scan.peek().kind != "end":
            return scan.next()
    else:
        _es5_time(scan, parts)
    if parts.tz_hour is None and not parts.clock:
        parts.tz_set(0)
    parts.iso = True
    return _Token("end")


def _two(scan: _Scanner, low: int, high: int) -> int:
    if not scan.peek().fixed(2) or not low <= scan.peek().number() <= high:
        raise _Invalid
    return scan.next().number()


def _es5_time(scan: _Scanner, parts: _Parts) -> None:
    scan.next()
    hour = _two(scan, 0, 24)
    if not scan.skip(":"):
        raise _Invalid
    minute = _two(scan, 0, 59)
    if hour == 24 and minute > 0:
        raise _Invalid
    parts.clock.extend([hour, minute])
    if scan.skip(":"):
        second = _two(scan, 0, 59)
        if hour == 24 and second > 0:
            raise _Invalid
        parts.clock.append(second)
        if scan.skip("."):
            if scan.peek().kind != "number" or (hour == 24 and scan.peek().number() > 0):
                raise _Invalid
            parts.clock.append(_millis(scan.next()))
    if scan.peek().is_z():
        scan.next()
        parts.tz_set(0)
    elif scan.peek().is_sign():
        parts.tz_sign = 1 if scan.next().value == "+" else -1
        if scan.peek().fixed(4):
            hourmin = scan.next().number()
            if not (0 <= hourmin // 100 <= 23 and 0 <= hourmin % 100 <= 59):
                raise _Invalid
            parts.tz_hour, parts.tz_minute = hourmin // 100, hourmin % 100
        else:
            parts.tz_hour = _two(scan, 0, 23)
            if not scan.skip(":"):
                raise _Invalid
            parts.tz_minute = _two(scan, 0, 59)
    if scan.peek().kind != "end":
        raise _Invalid


def _legacy(scan: _Scanner, parts: _Parts, token: _Token) -> None:
    has_number = bool(parts.day)
    while token.kind != "end":
        if token.kind == "number":
            has_number = True
            n = token.number()
            if scan.skip(":"):
                if scan.skip(":"):
                    if parts.clock:
                        raise _Invalid
                    parts.clock.extend([n, 0])
                else:
                    if not parts.time_add(n):
                        raise _Invalid
                    if scan.peek().is_symbol("."):
                        scan.next()
            elif scan.skip(".") and parts.time_expecting(n):
                parts.time_add(n)
                if scan.peek().kind != "number":
                    raise _Invalid
                parts.time_final(_millis(scan.next()))
            elif parts.tz_expecting(n):
                parts.tz_minute = n
            elif parts.time_expecting(n):
                parts.time_final(n)
                peek = scan.peek()
                if peek.kind not in ("end", "space") and not peek.is_z() and not peek.is_sign():
                    raise _Invalid
            else:
                if len(parts.day) >= 3:
                    raise _Invalid
                parts.day.append(n)
                scan.skip("-")
        elif token.kind == "word":
            if token.word_type == "ampm" and parts.clock:
                parts.hour_offset = token.word_value
            elif token.word_type == "month":
                parts.named_month = token.word_value
                scan.skip("-")
            elif token.word_type == "zone" and has_number:
                parts.tz_set(token.word_value)
            elif has_number or scan.peek().kind == "number":
                raise _Invalid
        elif token.is_sign() and (parts.tz_utc() or parts.clock):
            parts.tz_sign = -1 if token.value == "-" else 1
            n, length = 0, 0
            if scan.peek().kind == "number":
                following = scan.next()
                n, length = following.number(), following.length
            has_number = True
            if scan.peek().is_symbol(":"):
                parts.tz_hour, parts.tz_minute = n, None
            elif length in (1, 2):
                parts.tz_hour, parts.tz_minute = n, 0
            elif length in (3, 4):
                parts.tz_hour, parts.tz_minute = n // 100, n % 100
            else:
                raise _Invalid
        elif (token.is_sign() or token.is_symbol(")")) and has_number:
            raise _Invalid
        token = scan.next()


def _ymd(parts: _Parts) -> tuple[int, int, int]:
    if not parts.day:
        raise _Invalid
    comp = parts.day + [1] * (3 - len(parts.day))
    if parts.named_month is None:
        if parts.iso or not 1 <= comp[0] <= 31:
            year, month, day = comp
        else:
            month, day, year = comp
    else:
        month = parts.named_month
        if not 1 <= comp[0] <= 31:
            year, day = comp[0], comp[1]
        else:
            day, year = comp[0], comp[1]
    if not parts.iso:
        if 0 <= year <= 49:
            year += 2000
        elif 50 <= year <= 99:
            year += 1900
    if not (1 <= month <= 12 and 1 <= day <= 31):
        raise _Invalid
    return year, month, day


def _clock_ms(parts: _Parts) -> int:
    hour, minute, second, ms = parts.clock + [0] * (4 - len(parts.clock))
    if parts.hour_offset is not None:
        if not 0 <= hour <= 12:
            raise _Invalid
        hour = hour % 12 + parts.hour_offset
    if not (0 <= hour <= 23 and 0 <= minute <= 59 and 0 <= second <= 59 and 0 <= ms <= 999) and (
        hour != 24 or minute or second or ms
    ):
        raise _Invalid
    return ((hour * 60 + minute) * 60 + second) * 1000 + ms


def js_date_ms(text: str) -> float | None:
    """The time value `new Date(text)` gives in V8 with TZ=UTC, or None for an invalid date."""
    scan = _Scanner(_tokens(text))
    parts = _Parts([])
    try:
        first = _es5(scan, parts)
        _legacy(scan, parts, first)
        year, month, day = _ymd(parts)
        clock = _clock_ms(parts)
    except _Invalid:
        return None
    if abs(year) > 1_000_000:
        return None
    value = float(days_from_civil(year, month, day) * 86_400_000 + clock)
    if parts.tz_sign is not None:
        value -= parts.tz_sign * ((parts.tz_hour or 0) * 3600 + (parts.tz_minute or 0) * 60) * 1000
    return value if abs(value) <= MAX_TIME_MS else None
