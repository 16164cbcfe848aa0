"""targets/retry_policy.py: which statuses are asked again, and what a rate limit's "now" costs."""

from __future__ import annotations

import pytest

from agentv_ci.targets.retry_policy import NOW_S, is_transient, model_api_policy


@pytest.mark.parametrize("status", [408, 409, 500, 502, 503, 504, 520, 522, 524, 529, 599])
def test_transient_statuses_are_retried(status: int) -> None:
    assert is_transient(status)


@pytest.mark.parametrize("status", [200, 301, 400, 401, 403, 404, 413, 422, 429, 501, 505])
def test_other_statuses_are_not(status: int) -> None:
    assert not is_transient(status)  # 429 is the limiter's; 501/505 can never work


def test_a_wait_of_zero_or_a_past_date_says_now() -> None:
    says_now = model_api_policy(4, backoff_s=0.5, backoff_cap_s=30.0).says_now
    assert says_now(0.0) and says_now(NOW_S / 2)
    assert not says_now(None) and not says_now(NOW_S) and not says_now(1.0)


def test_a_now_gets_the_jittered_backoff_and_a_real_wait_is_honoured() -> None:
    policy = model_api_policy(4, backoff_s=0.5, backoff_cap_s=30.0)
    delays = [policy.delay(3, 0.0) for _ in range(200)]
    assert all(0 <= d <= 4.0 for d in delays) and max(delays) > 1.0  # full jitter up to 0.5 x 2^3
    capped = model_api_policy(4, backoff_s=0.5, backoff_cap_s=1.0)
    assert capped.delay(0, 7.0) == 7.0  # above the cap
    assert capped.delay(0, 1e9) == 120.0  # the ceiling
