"""The model APIs' setting of the one retry policy (retrying/; applied by targets/http.py).

- **Transient** (retried): 408, 409, every 5xx but 501 and 505 (they say the request can never
  work), a connection refused or reset before an answer, an attempt past `timeout_seconds`. Each
  retry spends one of `max_retries` (default 4: five attempts) and waits capped exponential backoff
  with full jitter, or the server's `retry-after` when it sends one.
- **Rate limits** (429, 529; targets/rate_limits.py) wait what the server says without spending a
  retry, except a wait that says "now" (under `NOW_S`: `Retry-After: 0`, a date in the past): that
  spends one and waits the backoff, so a server answering 429 + `Retry-After: 0` for ever gets
  `max_retries + 1` requests, not thousands. A request still limited `RATE_LIMIT_GIVE_UP_S` after
  its first send fails.
- Any other status is the request's own fault: asked once.

Every loop also ends at the call's deadline (`deadline_s`: the test's timeout, else the default of
deadlines.py), counted from the first send: queueing behind the target's pace is not the test's time.
"""

from __future__ import annotations

from agentv_ci.retrying import RetryPolicy, full_jitter, is_server_fault

DEFAULT_MAX_RETRIES = 4  # five attempts: at 20 % transient faults, 0.2^5 = 0.03 % of tests still fail
# The first retry waits up to 250 ms, the fourth up to 2 s (full jitter): the unluckiest of 1,000
# tests at 20 % faults waits about 3 s in all, where 500 ms made it 4-6 s (bench/faults.py).
DEFAULT_RETRY_INITIAL_DELAY_MS = 250.0
RETRIED_4XX = frozenset({408, 409})  # Request Timeout, Conflict (a concurrent-request clash)
NOW_S = 0.05  # a rate-limit wait shorter than this says "now": it spends a retry
RATE_LIMIT_GIVE_UP_S = 600.0  # a request still rate limited this long after its first send fails


def is_transient(status: int) -> bool:
    """An HTTP status worth asking again (not a rate limit: those are the limiter's)."""
    return status in RETRIED_4XX or is_server_fault(status)


def model_api_policy(max_retries: int, *, backoff_s: float, backoff_cap_s: float) -> RetryPolicy:
    """The policy of one model-API target: its retries and backoff, full jitter, no wait budget
    (the call's deadline bounds it)."""
    return RetryPolicy(
        max_retries=max_retries,
        max_wait_s=None,
        backoff_s=backoff_s,
        backoff_cap_s=backoff_cap_s,
        jitter=full_jitter,
        retried=is_transient,
        now_s=NOW_S,
        rate_limited_give_up_s=RATE_LIMIT_GIVE_UP_S,
    )
