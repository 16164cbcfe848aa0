"""Numbers as AgentV's JavaScript reads and prints them: `Number.parseFloat`, `String(x)`,
`x.toFixed(2)` and `String(value)` of a JSON value."""

from __future__ import annotations

import math
import re
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from agentv_ci.js_semantics.js_date_parse import JS_SPACE

# StrDecimalLiteral's longest prefix, after leading white space: what parseFloat reads.
_DECIMAL = re.compile(r"[+-]?(?:Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")
_NUMERIC = re.compile(
    r"[+-]?(?:Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)|0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+"
)


def js_trim(text: str) -> str:
    start, end = 0, len(text)
    while start < end and text[start] in JS_SPACE:
        start += 1
    while end > start and text[end - 1] in JS_SPACE:
        end -= 1
    return text[start:end]


def _decimal_value(literal: str) -> float:
    if literal.lstrip("+-") == "Infinity":
        return -math.inf if literal.startswith("-") else math.inf
    try:
        return float(literal)
    except OverflowError:  # pragma: no cover - float() gives inf rather than raising
        return -math.inf if literal.startswith("-") else math.inf


def parse_float(text: str) -> float:
    """`Number.parseFloat(text)`: the longest decimal prefix after leading white space, else NaN
    (`"12.50kg"` 12.5, `"0x10"` 0, `".5"` 0.5, `"1e3x"` 1000, `""` NaN)."""
    start = 0
    while start < len(text) and text[start] in JS_SPACE:
        start += 1
    found = _DECIMAL.match(text, start)
    return _decimal_value(found.group(0)) if found else math.nan


def to_number(value: Any) -> float:
    """JavaScript's `Number(value)` for a JSON value (what `diff <= tolerance` coerces to)."""
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        return _as_float(value)
    if isinstance(value, str):
        text = js_trim(value)
        if not text:
            return 0.0
        if not _NUMERIC.fullmatch(text):
            return math.nan
        if text[:2].lower() in ("0x", "0o", "0b"):
            return float(int(text, 0))
        return _decimal_value(text)
    return math.nan


def _as_float(value: int | float) -> float:
    try:
        return float(value)
    except OverflowError:  # an integer beyond a double: JSON.parse gives Infinity
        return math.inf if value > 0 else -math.inf


def js_number_string(value: float) -> str:
    """`String(x)` for a number: `1`, `0.1`, `1e-7`, `1e+21`, `NaN`, `Infinity`."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    mantissa, _, exp_text = repr(abs(value)).partition("e")
    whole, _, frac = mantissa.partition(".")
    every = whole + frac
    leading = len(every) - len(every.lstrip("0"))
    # The shortest round-trip digits (as JavaScript picks them) and where the decimal point goes.
    point = len(whole) + (int(exp_text) if exp_text else 0) - leading
    digits = every.lstrip("0").rstrip("0") or "0"
    k, n = len(digits), point
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    exponent = n - 1
    shown = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{shown}e{'+' if exponent >= 0 else '-'}{abs(exponent)}"


def to_fixed(value: float, places: int) -> str:
    """`x.toFixed(places)`: the exact binary value rounded half up; `String(x)` from 1e21."""
    if math.isnan(value) or math.isinf(value) or abs(value) >= 1e21:
        return js_number_string(value)
    quantum = Decimal(1).scaleb(-places)
    rounded = Decimal(value).copy_abs().quantize(quantum, rounding=ROUND_HALF_UP)
    text = f"{rounded:.{places}f}"
    return ("-" + text) if value < 0 else text


def js_string(value: Any) -> str:
    """`String(value)` of a JSON value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return js_number_string(_as_float(value))
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return ",".join("" if v is None else js_string(v) for v in value)
    return "[object Object]"
