"""Which forge answers are worth asking again, and after how long: the policy's status rule plus
each platform's rate-limit headers, as small rules of the same shape.

- GitHub: a 403 or 429 with `Retry-After` (a secondary rate limit), or with
  `x-ratelimit-remaining: 0` and `x-ratelimit-reset` (the epoch the primary limit resets); a 429
  without either gets the backoff; a plain 403 is a permission answer, never retried.
- GitLab: a 429 with `Retry-After`, else `RateLimit-Reset` (epoch seconds), else the backoff.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from agentv_ci.retrying.policy import Advice, RetryPolicy

# (status, headers with lower-case names, the epoch now) -> advice, or None: not a rate limit
RateLimitRule = Callable[[int, Mapping[str, str], float], Advice | None]


def header_seconds(raw: str | None) -> float | None:
    """A header's number of seconds (or epoch), None when absent, not a number or negative."""
    if raw is None:
        return None
    try:
        value = float(raw.strip())
    except ValueError:
        return None
    return value if 0 <= value < float("inf") else None


def github_rate_limit(status: int, headers: Mapping[str, str], epoch_now: float) -> Advice | None:
    """GitHub's primary and secondary rate limits (see the module docstring)."""
    if status not in (403, 429):
        return None
    retry_after = header_seconds(headers.get("retry-after"))
    if retry_after is not None:
        return Advice(retry_after)
    reset = header_seconds(headers.get("x-ratelimit-reset"))
    if headers.get("x-ratelimit-remaining") == "0" and reset is not None:
        return Advice(max(0.0, reset - epoch_now))
    return Advice() if status == 429 else None


def gitlab_rate_limit(status: int, headers: Mapping[str, str], epoch_now: float) -> Advice | None:
    """GitLab's rate limit: 429 with `Retry-After` or `RateLimit-Reset` (see the module docstring)."""
    if status != 429:
        return None
    retry_after = header_seconds(headers.get("retry-after"))
    if retry_after is not None:
        return Advice(retry_after)
    reset = header_seconds(headers.get("ratelimit-reset"))
    return Advice(max(0.0, reset - epoch_now)) if reset is not None else Advice()


def advice_for(
    status: int, headers: Mapping[str, str], policy: RetryPolicy, rate_limit: RateLimitRule, epoch_now: float
) -> Advice | None:
    """Ask again (after what wait), or None: the answer is final."""
    limited = rate_limit(status, headers, epoch_now)
    if limited is not None:
        return limited
    if policy.retried(status):
        return Advice(header_seconds(headers.get("retry-after")))
    return None
