import re
from datetime import UTC, datetime

from agentv_ci.clock import iso_z, now_millis, now_seconds


def test_iso_z_writes_utc_as_z() -> None:
    moment = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    assert iso_z(moment) == "2026-01-02T03:04:05.678Z"
    assert iso_z(moment, timespec="seconds") == "2026-01-02T03:04:05Z"


def test_now_has_the_documented_precision() -> None:
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", now_seconds())
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", now_millis())
