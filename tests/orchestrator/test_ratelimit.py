"""Minute windows aligned to the clock, Retry-After until the minute rolls, the address ceiling."""
from __future__ import annotations

import pytest

from orchestrator.errors import DomainError
from orchestrator.ratelimit import AddressLimiter, TokenLimiter

MINUTE = 60_000


def test_token_ceiling_and_rollover():
    limiter = TokenLimiter()
    t0 = 1000 * MINUTE + 15_000  # 15 s into a minute
    for _ in range(3):
        limiter.hit("tok", 3, t0)
    with pytest.raises(DomainError) as e:
        limiter.hit("tok", 3, t0 + 1000)
    assert e.value.code == "rate_limited" and e.value.status == 429
    assert e.value.retry_after_s == 44  # until the minute rolls
    limiter.hit("other", 3, t0)  # tokens count separately
    limiter.hit("tok", 3, 1001 * MINUTE)  # the next minute starts from zero


def test_retry_after_is_at_least_one_second():
    limiter = TokenLimiter()
    limiter.hit("t", 1, MINUTE - 1)
    with pytest.raises(DomainError) as e:
        limiter.hit("t", 1, MINUTE - 1)
    assert e.value.retry_after_s == 1


def test_address_limiter_turns_refusals_past_the_ceiling_into_429():
    limiter = AddressLimiter(ceiling=2)
    refusal = DomainError("token_required", "no token")
    t = 5 * MINUTE
    assert limiter.refuse("1.2.3.4", refusal, t) is refusal
    assert limiter.refuse("1.2.3.4", refusal, t) is refusal
    over = limiter.refuse("1.2.3.4", refusal, t)
    assert over.code == "rate_limited" and over.retry_after_s == 60
    assert limiter.refuse("5.6.7.8", refusal, t) is refusal  # per address
    not_a_refusal = DomainError("bad_env", "env.seed")
    assert limiter.refuse("1.2.3.4", not_a_refusal, t) is not_a_refusal  # 400s do not count
    assert limiter.refuse("1.2.3.4", refusal, 6 * MINUTE) is refusal  # next minute
