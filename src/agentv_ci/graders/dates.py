"""Calendar dates as AgentV v4.42.4's field-accuracy `parseDate` reads them: JavaScript's
`new Date(text)` first (V8's parser, see js_date_parse: `03/05/24` is 5 March 2024, `20240305` is no
date), then `15-JAN-2025`, then `DD/MM/YYYY` or `MM/DD/YYYY` by the declared `formats` (only reached
when `new Date` fails, e.g. `13/05/2024`), except that a single declared day/month order decides
`NN/NN/YYYY` first (see `_declared_order`). Days are compared in UTC: the machine zone AgentV would
use is pinned to UTC, as on CI runners."""

from __future__ import annotations

import re
from collections.abc import Sequence

from agentv_ci.js_semantics.js_calendar import days_from_civil, utc_day
from agentv_ci.js_semantics.js_date_parse import MAX_TIME_MS, js_date_ms
from agentv_ci.js_semantics.js_numbers import js_trim

DEFAULT_DATE_FORMATS = (
    "YYYY-MM-DDTHH:mm:ssZ",
    "YYYY-MM-DDTHH:mm:ss",
    "YYYY-MM-DD",
    "DD-MMM-YYYY",
    "MM/DD/YYYY",
    "DD/MM/YYYY",
    "MM-DD-YYYY",
    "DD-MM-YYYY",
)
_MONTH_NAMES = {
    name: index
    for index, names in enumerate(
        [
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ]
    )
    for name in names
}
_LOCALIZED = re.compile(r"([0-9]{1,2})-([A-Za-z]{3,9})-([0-9]{4})\Z")
_NUMERIC = re.compile(r"([0-9]{1,2})[/\-]([0-9]{1,2})[/\-]([0-9]{4})\Z")

Day = tuple[int, int, int]


def _local_date(year: int, month_index: int, day: int) -> Day | None:
    """`new Date(year, monthIndex, day)` (local = UTC) as a calendar day; years 0-99 are 19xx."""
    if 0 <= year <= 99:
        year += 1900
    year += month_index // 12
    ms = days_from_civil(year, month_index % 12 + 1, day) * 86_400_000
    return utc_day(ms) if abs(ms) <= MAX_TIME_MS else None


def _order(formats: Sequence[str]) -> tuple[bool, bool]:
    us = any("MM/DD" in str(f) or "MM-DD" in str(f) for f in formats)
    eu = any("DD/MM" in str(f) or "DD-MM" in str(f) for f in formats)
    return us, eu


def _declared_order(value: str, formats: Sequence[str]) -> Day | None:
    """The one deliberate difference (issue 3's rule, kept): `formats` that declare a single
    day/month order decide `NN/NN/YYYY` before `new Date` does (`05/03/2024` with `DD/MM/YYYY` is
    5 March; AgentV's `new Date` reads 3 May and never reaches its own format check)."""
    numeric = _NUMERIC.match(value)
    us, eu = _order(formats)
    if numeric is None or us == eu:
        return None
    first, second, year = (int(g) for g in numeric.groups())
    month, day = (first, second) if us else (second, first)
    return _local_date(year, month - 1, day) if 1 <= month <= 12 and 1 <= day <= 31 else None


def parse_date(text: str, formats: Sequence[str] = DEFAULT_DATE_FORMATS) -> Day | None:
    """The UTC calendar day (year, month, day) AgentV reads from `text`, or None."""
    if not text:
        return None
    value = js_trim(text)
    declared = _declared_order(value, formats)
    if declared is not None:
        return declared
    ms = js_date_ms(value)
    if ms is not None:
        return utc_day(ms)
    localized = _LOCALIZED.match(value)
    if localized:
        month = _MONTH_NAMES.get(localized.group(2).lower())
        if month is not None:
            return _local_date(int(localized.group(3)), month, int(localized.group(1)))
    numeric = _NUMERIC.match(value)
    if not numeric:
        return None
    first, second, year = (int(g) for g in numeric.groups())
    us, eu = _order(formats)
    if us and not eu:
        month, day = first, second
    elif (eu and not us) or (first > 12 and second <= 12):
        month, day = second, first
    elif (second > 12 and first <= 12) or (first <= 12 and second <= 31):
        month, day = first, second
    else:
        return None
    if 1 <= month <= 12 and 1 <= day <= 31:
        return _local_date(year, month - 1, day)
    return None
