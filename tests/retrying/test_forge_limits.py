"""The forges' rate-limit rules and the policy's delays (retrying/), hostile headers included."""

from __future__ import annotations

import pytest

from agentv_ci.retrying import (
    Advice,
    GiveUp,
    Retry,
    RetryBudget,
    RetryPolicy,
    advice_for,
    github_rate_limit,
    gitlab_rate_limit,
    header_seconds,
)

NOW = 1_700_000_000.0


@pytest.mark.parametrize("raw", [None, "", "soon", "-1", "nan", "inf", "1e999"])
def test_a_header_that_is_not_a_number_of_seconds_is_no_advice(raw: str | None) -> None:
    assert header_seconds(raw) is None


def test_github_primary_and_secondary_limits() -> None:
    reset = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW + 7))}
    assert github_rate_limit(403, reset, NOW) == Advice(7.0)
    assert github_rate_limit(403, {"retry-after": "2"}, NOW) == Advice(2.0)
    assert github_rate_limit(429, {}, NOW) == Advice()  # the backoff
    assert github_rate_limit(403, {}, NOW) is None  # a permission answer
    assert github_rate_limit(403, {"x-ratelimit-remaining": "4", "x-ratelimit-reset": "9"}, NOW) is None


def test_gitlab_limits_are_429s_with_retry_after_or_ratelimit_reset() -> None:
    assert gitlab_rate_limit(429, {"ratelimit-reset": str(int(NOW + 5))}, NOW) == Advice(5.0)
    assert gitlab_rate_limit(429, {"retry-after": "3", "ratelimit-reset": str(int(NOW + 50))}, NOW) == Advice(
        3.0
    )
    assert gitlab_rate_limit(429, {"ratelimit-reset": str(int(NOW - 50))}, NOW) == Advice(0.0)
    assert gitlab_rate_limit(429, {}, NOW) == Advice()
    assert gitlab_rate_limit(403, {"retry-after": "3"}, NOW) is None  # GitLab's 403 is a permission answer


def test_the_status_rule_is_the_policys() -> None:
    policy = RetryPolicy()
    assert advice_for(502, {"retry-after": "4"}, policy, gitlab_rate_limit, NOW) == Advice(4.0)
    assert advice_for(501, {}, policy, gitlab_rate_limit, NOW) is None
    assert advice_for(409, {}, policy, gitlab_rate_limit, NOW) is None
    assert advice_for(409, {}, RetryPolicy(retried=lambda s: s == 409), gitlab_rate_limit, NOW) == Advice()


def test_the_budget_caps_attempts_waits_and_rate_limited_time() -> None:
    budget = RetryBudget(RetryPolicy(max_retries=2, max_wait_s=5.0))
    assert budget.next_wait(Retry("x")) == 1.0
    assert budget.next_wait(Retry("x", wait_s=4.5)) == GiveUp("wait_budget", 2)  # 1 + 4.5 > 5
    assert budget.next_wait(Retry("x", wait_s=3.0)) == 3.0
    assert budget.next_wait(Retry("x")) == GiveUp("attempts", 3)
    clock = [0.0]
    limited = RetryBudget(RetryPolicy(max_wait_s=None, rate_limited_give_up_s=10.0), lambda: clock[0])
    assert limited.next_wait(Retry("x", wait_s=6.0, spends=False)) == 6.0 and limited.spent == 0
    clock[0] = 10.0
    assert limited.next_wait(Retry("x", wait_s=6.0, spends=False)) == GiveUp("rate_limited", 1)


def test_an_advised_wait_is_honoured_to_the_ceiling_and_now_gets_the_backoff() -> None:
    policy = RetryPolicy(backoff_s=0.5, backoff_cap_s=1.0, now_s=0.05)
    assert policy.delay(3, 7.0) == 7.0 and policy.delay(3, 1e9) == 120.0
    assert policy.delay(3, 0.0) == 1.0  # "now": the capped backoff
    assert RetryPolicy().delay(0, 0.0) == 0.0  # the forges take a Retry-After: 0 at its word
