"""The documented upper bounds on the work one run can be asked to do (docs/eval-format.md, "Bounds").

Every count that multiplies work is capped, so a typo or a hostile eval file (`trials: {count:
1000000000}`) is refused before anything runs instead of running for days. A value over its bound
is the located error E115 in `validate` and `run`, or a usage error for a command-line flag."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import msgspec

from agentv_ci.errors import UsageError

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
# Money: a spend can only grow, so a negative price or cost would cancel what a judge cost.
MAX_USD = 1_000_000.0  # budget_usd, cost_limit_usd, a cost grader's budget, a mock target's cost_usd
MAX_PRICE_PER_MTOK = 10_000.0  # pricing: USD per million tokens (the dearest models cost ~$600)
# Rates: the slowest allowed pace still sends one request a minute and lets a request of 1,000
# tokens through each minute, so a run ends; the fastest is beyond any real API's limit.
MIN_RPM, MAX_RPM = 1.0, 10_000_000.0  # max_rpm, requests per minute
MIN_TPM, MAX_TPM = 1_000.0, 10_000_000_000.0  # max_tpm, tokens per minute
MAX_CONCURRENCY = 10_000  # max_concurrency, requests in flight (as max_connections)
MAX_TEMPERATURE = 2.0  # the widest range a model API takes (OpenAI: 0..2, Anthropic: 0..1)
MAX_WAIT_MS = MAX_TIMEOUT_S * 1000  # delay_ms, a hook's timeout_ms, a duration limit in ms
MAX_WEIGHT = 1_000_000.0  # a grader's or rubric's weight (a sum of weights must stay finite)
Usd = Annotated[float, msgspec.Meta(ge=0, le=MAX_USD)]
UsdPerMtok = Annotated[float, msgspec.Meta(ge=0, le=MAX_PRICE_PER_MTOK)]
RequestsPerMinute = Annotated[float, msgspec.Meta(ge=MIN_RPM, le=MAX_RPM)]
TokensPerMinute = Annotated[float, msgspec.Meta(ge=MIN_TPM, le=MAX_TPM)]
Concurrency = Annotated[int, msgspec.Meta(ge=1, le=MAX_CONCURRENCY)]
Temperature = Annotated[float, msgspec.Meta(ge=0, le=MAX_TEMPERATURE)]
WaitMs = Annotated[float, msgspec.Meta(ge=0, le=MAX_WAIT_MS)]
Fraction = Annotated[float, msgspec.Meta(ge=0, le=1)]


def within(value: float, low: float, high: float, *, above: bool = False) -> bool:
    """`low <= value <= high` (`low < value` with `above`): False for NaN, which fails every
    comparison, and for an infinity, as no bound is infinite."""
    return (low < value if above else low <= value) and value <= high


def check_run_flags(
    *, repeat: int | None = None, targets: Sequence[str] = (), workers: int | None = None
) -> None:
    """`UsageError` naming the bound when a flag (or the Action input of that name) asks for more
    work than its bound allows: checked before anything is loaded or run."""

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
    "MAX_CONCURRENCY",
    "MAX_CONNECTIONS",
    "MAX_JOBS",
    "MAX_PRICE_PER_MTOK",
    "MAX_RETRIES",
    "MAX_RETRY_DELAY_MS",
    "MAX_RPM",
    "MAX_TARGETS",
    "MAX_TEMPERATURE",
    "MAX_TIMEOUT_S",
    "MAX_TPM",
    "MAX_TURNS",
    "MAX_USD",
    "MAX_WAIT_MS",
    "MAX_WEIGHT",
    "MAX_WORKERS",
    "MIN_RPM",
    "MIN_TPM",
    "Concurrency",
    "Connections",
    "Fraction",
    "RequestsPerMinute",
    "Retries",
    "RetryDelayMs",
    "Temperature",
    "TimeoutSeconds",
    "TokensPerMinute",
    "Usd",
    "UsdPerMtok",
    "WaitMs",
    "check_run_flags",
    "within",
]
