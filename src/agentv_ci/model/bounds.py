"""The documented upper bounds on the work one run can be asked to do (docs/eval-format.md, "Bounds").

Every count that multiplies work is capped, so a typo or a hostile eval file (`trials: {count:
1000000000}`) is refused before anything runs instead of running for days. A value over its bound
is the located error E115 in `validate` and `run`, or a usage error for a command-line flag."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import msgspec

MAX_ATTEMPTS = 100  # attempts of one test x target: `repeat`/`trials`/`runs` `count`, --repeat
MAX_TURNS = 100  # turns of one live conversation (`mode: conversation`)
MAX_TARGETS = 50  # targets one test runs against: `execution.targets`, --target repeated
MAX_JOBS = 1_000_000  # tests x targets of one run (every test of the eval files, before selection)
MAX_WORKERS = 1000  # --workers (the `workers:` key of an eval file stays 1..50, as in AgentV)
# Target settings (targets.yaml): a wait is finite and positive, retries and pools are bounded, so
# `timeout_seconds: .inf` or `max_retries: 9223372036854775807` is a located error, not a run that
# never ends (msgspec checks these when the target's config is converted).
MAX_TIMEOUT_S = 7 * 24 * 3600.0  # timeout_seconds of a target or code grader (as AGENTV_CI_DEFAULT_TIMEOUT)
MAX_RETRIES = 20  # max_retries of a model API target
MAX_RETRY_DELAY_MS = 600_000.0  # retry_initial_delay_ms / retry_max_delay_ms
MAX_CONNECTIONS = 10_000  # max_connections of a model API target
TimeoutSeconds = Annotated[float, msgspec.Meta(gt=0, le=MAX_TIMEOUT_S)]
Retries = Annotated[int, msgspec.Meta(ge=0, le=MAX_RETRIES)]
RetryDelayMs = Annotated[float, msgspec.Meta(ge=0, le=MAX_RETRY_DELAY_MS)]
Connections = Annotated[int, msgspec.Meta(ge=1, le=MAX_CONNECTIONS)]


def check_run_flags(
    *, repeat: int | None = None, targets: Sequence[str] = (), workers: int | None = None
) -> None:
    """`UsageError` naming the bound when a flag (or the Action input of that name) asks for more
    work than its bound allows: checked before anything is loaded or run."""
    from agentv_ci.errors import UsageError

    if repeat is not None and not 1 <= repeat <= MAX_ATTEMPTS:
        raise UsageError(
            f"--repeat must be from 1 to {MAX_ATTEMPTS} (the bound on attempts per test), got {repeat}"
        )
    distinct = len(set(targets))
    if distinct > MAX_TARGETS:
        raise UsageError(
            f"--target names at most {MAX_TARGETS} targets (the bound on the matrix), got {distinct}"
        )
    if workers is not None and not 1 <= workers <= MAX_WORKERS:
        raise UsageError(f"--workers must be from 1 to {MAX_WORKERS}, got {workers}")


__all__ = [
    "MAX_ATTEMPTS",
    "MAX_CONNECTIONS",
    "MAX_JOBS",
    "MAX_RETRIES",
    "MAX_RETRY_DELAY_MS",
    "MAX_TARGETS",
    "MAX_TIMEOUT_S",
    "MAX_TURNS",
    "MAX_WORKERS",
    "Connections",
    "Retries",
    "RetryDelayMs",
    "TimeoutSeconds",
    "check_run_flags",
]
