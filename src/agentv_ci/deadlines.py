"""Deadlines: every wait ends, by the wall clock, and says so the same way.

A test's target gets the per-test timeout (`--timeout` > test `execution.timeout_seconds` > suite) or,
for a subprocess target (`cli`, the coding agents) that sets no `timeout_seconds` of its own, the
default below: 30 minutes, as long as a coding agent's task may fairly take, and short enough that a
hung program cannot hold a CI job until GitHub kills it at 6 hours. `AGENTV_CI_DEFAULT_TIMEOUT`
(seconds) changes that default for a run.

GitHub API calls end after 30 s and an artifact download after 120 s, connect to last byte
(`AGENTV_CI_GITHUB_TIMEOUT`, `AGENTV_CI_GITHUB_DOWNLOAD_TIMEOUT`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping

from agentv_ci.errors import UsageError

DEFAULT_TEST_TIMEOUT_S = 1800.0
DEFAULT_TIMEOUT_VARIABLE = "AGENTV_CI_DEFAULT_TIMEOUT"
GITHUB_TIMEOUT_S = 30.0
GITHUB_TIMEOUT_VARIABLE = "AGENTV_CI_GITHUB_TIMEOUT"
GITHUB_DOWNLOAD_TIMEOUT_S = 120.0
GITHUB_DOWNLOAD_TIMEOUT_VARIABLE = "AGENTV_CI_GITHUB_DOWNLOAD_TIMEOUT"
_LONGEST_S = 7 * 24 * 3600.0


def seconds_from_env(variable: str, default: float, env: Mapping[str, str] | None = None) -> float:
    """The number of seconds `variable` holds, else `default`. Raises `UsageError` (exit 2) for a
    value that is not a number of seconds above 0 (and at most a week)."""
    raw = (os.environ if env is None else env).get(variable, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0 < value <= _LONGEST_S:
        raise UsageError(
            f"{variable} must be a number of seconds greater than 0 (at most {_LONGEST_S:g}), "
            f"got {raw[:40]!r}",
            hint=f"unset it to use the default of {default:g} s",
        )
    return value


def default_test_timeout_s(env: Mapping[str, str] | None = None) -> float:
    """The per-test timeout when nothing sets one: `AGENTV_CI_DEFAULT_TIMEOUT`, else 1800 s."""
    return seconds_from_env(DEFAULT_TIMEOUT_VARIABLE, DEFAULT_TEST_TIMEOUT_S, env)


def github_timeouts(env: Mapping[str, str] | None = None) -> tuple[float, float]:
    """(per API call, per download) in seconds: 30 and 120 unless the variables say otherwise."""
    return (
        seconds_from_env(GITHUB_TIMEOUT_VARIABLE, GITHUB_TIMEOUT_S, env),
        seconds_from_env(GITHUB_DOWNLOAD_TIMEOUT_VARIABLE, GITHUB_DOWNLOAD_TIMEOUT_S, env),
    )


def timed_out(seconds: float) -> str:
    """The reason every timeout gives: `timed out after 3s (wall clock)`."""
    return f"timed out after {seconds:g}s (wall clock)"
