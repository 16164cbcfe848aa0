"""Proleptic Gregorian day arithmetic for JavaScript time values (any year, days may overflow the
month as `MakeDay` lets them)."""

from __future__ import annotations


def days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (day may overflow the month)."""
    y = year - (month <= 2)
    era = y // 400  # floor division: no C-style correction for negative years
    yoe = y - era * 400
    mp = (month + 9) % 12
    doy = (153 * mp + 2) // 5
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468 + day - 1


def civil_from_days(days: int) -> tuple[int, int, int]:
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, day


def utc_day(ms: float) -> tuple[int, int, int]:
    """(year, month, day) of a time value in UTC."""
    return civil_from_days(int(ms // 86_400_000))


def iso_day(ymd: tuple[int, int, int]) -> str:
    """`toISOString().split('T')[0]`: YYYY-MM-DD, or ±YYYYYY-MM-DD outside years 0-9999."""
    year, month, day = ymd
    shown = f"{year:04d}" if 0 <= year <= 9999 else f"{'+' if year > 0 else '-'}{abs(year):06d}"
    return f"{shown}-{month:02d}-{day:02d}"
