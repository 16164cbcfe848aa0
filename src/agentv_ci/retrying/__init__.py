"""The one retry, backoff and deadline policy every HTTP client applies (model APIs, GitHub, GitLab):
`RetryPolicy` says what is asked again and how long to wait, `call_with_retries` (and its async twin)
is the loop that applies it, and the forge rules word each platform's rate-limit headers."""

from agentv_ci.retrying.forge_limits import (
    RateLimitRule,
    advice_for,
    github_rate_limit,
    gitlab_rate_limit,
    header_seconds,
)
from agentv_ci.retrying.loop import GiveUp, Retry, RetryBudget, call_with_retries, call_with_retries_async
from agentv_ci.retrying.policy import Advice, RetryPolicy, full_jitter, is_server_fault, no_jitter

__all__ = [
    "Advice",
    "GiveUp",
    "RateLimitRule",
    "Retry",
    "RetryBudget",
    "RetryPolicy",
    "advice_for",
    "call_with_retries",
    "call_with_retries_async",
    "full_jitter",
    "github_rate_limit",
    "gitlab_rate_limit",
    "header_seconds",
    "is_server_fault",
    "no_jitter",
]
