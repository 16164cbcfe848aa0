"""Calendar dates in the formats `field-accuracy` understands (AgentV's list), honouring declared
formats for ambiguous day/month orders: `05/03/2024` with `DD/MM/YYYY` is 5 March."""

from __future__ import annotations

import re
from datetime import date, datetime

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
MONTHS = {
    name: index + 1
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
_NAMED = re.compile(r"^(\d{1,2})[-\s]([A-Za-z]{3,9})[-\s](\d{4})$")
_NUMERIC = re.compile(r"^(\d{1,2})[/\-.](\d{1,2})[/\-.](\d{4})$")
# What JavaScript's `new Date(text)` (V8) also accepts and AgentV therefore matches: year-first dates
# with short or slashed parts, and month names ("March 5, 2024", "Tue Mar 05 2024", "5 March 2024").
_YEAR_FIRST = re.compile(r"^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:[T\s].*)?$")
_MONTH_DAY_YEAR = re.compile(
    r"^(?:[A-Za-z]+,?\s+)?([A-Za-z]{3,9})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b"
)
_DAY_MONTH_YEAR = re.compile(
    r"^(?:[A-Za-z]+,?\s+)?(\d{1,2})(?:st|nd|rd|th)?\s+([A-Za-z]{3,9})\.?,?\s+(\d{4})\b"
)


def _month(name: str) -> int | None:
    return MONTHS.get(name.lower()) or MONTHS.get(name.lower()[:3])


def _lenient(value: str) -> date | None:
    year_first = _YEAR_FIRST.match(value)
    if year_first:
        year, month, day = (int(g) for g in year_first.groups())
        return _safe(year, month, day)
    month_day = _MONTH_DAY_YEAR.match(value)
    if month_day and _month(month_day.group(1)):
        return _safe(int(month_day.group(3)), _month(month_day.group(1)) or 0, int(month_day.group(2)))
    day_month = _DAY_MONTH_YEAR.match(value)
    if day_month and _month(day_month.group(2)):
        return _safe(int(day_month.group(3)), _month(day_month.group(2)) or 0, int(day_month.group(1)))
    return None


def _safe(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def parse_date(text: str, formats: list[str] | tuple[str, ...] = DEFAULT_DATE_FORMATS) -> date | None:
    """The calendar day `text` names, or None."""
    value = text.strip()
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).date()
    except ValueError:
        pass
    named = _NAMED.match(value)
    if named:
        month = MONTHS.get(named.group(2).lower())
        return _safe(int(named.group(3)), month, int(named.group(1))) if month else None
    numeric = _NUMERIC.match(value)
    if not numeric:
        return _lenient(value)
    first, second, year = (int(g) for g in numeric.groups())
    us = any("MM/DD" in f or "MM-DD" in f for f in formats)
    eu = any("DD/MM" in f or "DD-MM" in f for f in formats)
    if us and not eu:
        return _safe(year, first, second)
    if eu and not us:
        return _safe(year, second, first)
    if first > 12 >= second:
        return _safe(year, second, first)
    return _safe(year, first, second)  # ambiguous: month first, as AgentV
