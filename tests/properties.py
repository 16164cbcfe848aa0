"""Settings for the property-based (hypothesis) tests: quick and deterministic in the suite, deeper
and random on request: `AGENTV_CI_PROPERTY_EXAMPLES=5000 .venv/bin/pytest tests/...properties.py`."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_DEEP = os.environ.get("AGENTV_CI_PROPERTY_EXAMPLES")


def property_settings(examples: int, *, deadline_ms: int | None = 3000) -> settings:
    """`examples` inputs per test (or the environment's number), a deadline per input (a hang fails
    the test), derandomized unless a deeper run was asked for, and no example database on disk."""
    return settings(
        max_examples=int(_DEEP) if _DEEP else examples,
        deadline=deadline_ms,
        derandomize=not _DEEP,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
