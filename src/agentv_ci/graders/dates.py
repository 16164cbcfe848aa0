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
        return None
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
