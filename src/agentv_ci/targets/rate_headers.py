"""What a provider's rate-limit headers say: how long to wait, and whether a limit is used up.

- `retry-after-ms` / `retry-after`: milliseconds, seconds, or an HTTP date.
- OpenAI: `x-ratelimit-remaining-requests` / `-tokens` and `x-ratelimit-reset-requests` / `-tokens`,
  the resets as Go-style durations ("20ms", "1s", "6m0s", "1h2m3.5s").
- Anthropic: `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-remaining` and
  `-reset`, the resets as RFC 3339 times ("2026-01-01T00:00:30Z").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)")
_UNIT_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
# (remaining header, reset header) pairs: a remaining count of 0 means the limit is used up until reset.
_LIMIT_PAIRS = (
    ("x-ratelimit-remaining-requests", "x-ratelimit-reset-requests"),
    ("x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens"),
    ("anthropic-ratelimit-requests-remaining", "anthropic-ratelimit-requests-reset"),
    ("anthropic-ratelimit-tokens-remaining", "anthropic-ratelimit-tokens-reset"),
    ("anthropic-ratelimit-input-tokens-remaining", "anthropic-ratelimit-input-tokens-reset"),
    ("anthropic-ratelimit-output-tokens-remaining", "anthropic-ratelimit-output-tokens-reset"),
)


def _now() -> datetime:
    return datetime.now(UTC)


def duration_seconds(text: str) -> float | None:
    """A Go-style duration ("1s", "6m0s", "20ms", "1h2m3.5s") or a bare number of seconds."""
    text = text.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    parts = _DURATION.findall(text)
    if not parts or "".join(number + unit for number, unit in parts) != text:
        return None
    return sum(float(number) * _UNIT_SECONDS[unit] for number, unit in parts)


def _time_seconds(text: str) -> float | None:
    """Seconds until an RFC 3339 time or an HTTP date (0 when it is past), None when neither."""
    text = text.strip()
    when: datetime | None = None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - _now()).total_seconds())


def reset_seconds(text: str) -> float | None:
    """A reset header's value as seconds from now: a duration, a number, an RFC 3339 time or an HTTP date."""
    value = duration_seconds(text)
    return value if value is not None else _time_seconds(text)


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """`retry-after-ms` / `retry-after` as seconds (numbers or an HTTP date), None when absent."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        return _time_seconds(raw)


@dataclass(frozen=True)
class RateSignal:
    """`retry_after`: the server's own wait (s); `exhausted_for`: a limit is used up for this long (s)."""

    retry_after: float | None = None
    exhausted_for: float | None = None


def rate_signal(headers: Mapping[str, str]) -> RateSignal:
    """What `headers` (of any answer, a 429 or a success) say about the target's limits."""
    exhausted: float | None = None
    for remaining_name, reset_name in _LIMIT_PAIRS:
        remaining = headers.get(remaining_name)
        reset = headers.get(reset_name)
        if remaining is None or reset is None:
            continue
        try:
            used_up = float(remaining) <= 0
        except ValueError:
            continue
        wait = reset_seconds(reset) if used_up else None
        if wait is not None and wait > (exhausted or 0.0):
            exhausted = wait
    return RateSignal(retry_after=retry_after_seconds(headers), exhausted_for=exhausted)
