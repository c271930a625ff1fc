"""Requests in flight per provider key (orchestrator.seats.limits), against the fake provider on the
loopback: many matches on one event loop share one key's limit, as on a model worker."""
import asyncio
from types import SimpleNamespace

import pytest

from engine.scenario import build_match, resolve_env, seat_specs
from orchestrator.plans import ConfigError
from orchestrator.seats import Credential, ModelSeats
from orchestrator.seats.limits import CEILING, START, configured_cap, key_limit


async def _match(fake, models: list[str], ticks: int, seed: int, cap, timeout_ms: int, after_429: bool = False):
    """One match of model seats played to its end; (stop reason, every seat's turn counts). after_429:
    it starts once a refusal of the provider's has reached the key's limit."""
    while after_429 and not key_limit("router", fake.url + "/v1", "k-good", cap).throttled:
        await asyncio.sleep(0.01)
    roster = [{"model": m, "provider": "router"} for m in models]
    env = resolve_env({})
    env["seed"], env["spawn_seed"], env["turn_timeout_ms"] = seed, seed + 1, timeout_ms
    job = SimpleNamespace(seats=roster, env=env, season_ticks=ticks, spend_cap_usd=None)
    match = build_match(ticks, env, seat_specs(models))
    creds = {i: Credential("k-good", fake.url + "/v1", private_ok=True, max_concurrent=cap) for i in range(len(models))}
    seats = ModelSeats(creds)
    usage = [{"agent_turns": 0, "input_tokens": 0, "output_tokens": 0, "usd": 0.0} for _ in models]
    stop, _ = await seats.play_async(match, job, usage, lambda: False, lambda t: None)
    assert usage[0]["agent_turns"] == ticks
    return stop, seats.turns


def _series(fake, matches: int, ticks: int, *, cap=None, timeout_ms=10000):
    async def go():
        out = await asyncio.gather(*(_match(fake, ["r/a", "r/b"], ticks, k, cap, timeout_ms) for k in range(matches)))
        return out, key_limit("router", fake.url + "/v1", "k-good", cap)
    return asyncio.run(go())


def _clean(played, ticks: int) -> None:
    for stop, turns in played:
        assert stop == "season_end"
        for t in turns.values():
            assert t["answered"] == ticks and t["timed_out"] == t["provider_errors"] == 0, t


def test_a_key_never_has_more_requests_in_flight_than_its_cap(fake):
    fake.default = {"calls": [("wait", {})], "delay_ms": 100}
    played, limit = _series(fake, 6, 3, cap=3)
    _clean(played, 3)
    assert fake.peak == 3  # 12 seats asked at once, 3 on their way at a time
    assert fake.throttled == 0 and limit.active == 0 and not [w for w in limit.waiters if not w.done()]


def test_a_series_on_a_rate_limited_key_backs_off_and_no_turn_fails(fake):
    """The provider serves 4 requests at once and answers 429 above that; 20 seats share the key,
    whose cap (32) is far above it. The limit halves on each wave of 429s and settles near what the
    provider takes: every turn is answered, and most requests are not refused."""
    fake.default = {"calls": [("wait", {})], "delay_ms": 100}
    fake.capacity = 4
    played, limit = _series(fake, 10, 5, cap=32)
    _clean(played, 5)
    turns = 10 * 2 * 5
    retries = sum(t["retries"] for _, seats in played for t in seats.values())
    assert fake.throttled == retries > 0  # the 429s were retried within their turns, never faults
    assert fake.throttled < turns / 2, fake.throttled
    assert limit.allowance <= 8 and limit.throttled == fake.throttled


def test_the_allowance_grows_past_its_start_and_settles_near_what_the_provider_takes(fake):
    """The provider serves 48 requests at once and answers 429 above that (a limit the service is never
    told); 80 seats share the key under the shipped defaults. The allowance grows past where it
    starts until the provider refuses, halves, and then moves between half the limit and the limit.
    Each answer takes 300 ms, so what is in flight at once is the allowance's doing, not the CPU's."""
    hidden = 48
    fake.default = {"calls": [("wait", {})], "delay_ms": 300}
    fake.capacity = hidden
    played, limit = _series(fake, 40, 4)
    _clean(played, 4)
    assert limit.ceiling == CEILING and fake.peak > START  # it grew past the start, up to the provider's limit
    assert 0 < fake.throttled < 0.1 * 80 * 4, fake.throttled  # it found the limit, and did not keep hitting it
    assert hidden / 2 - 4 <= limit.allowance <= hidden + 2, limit.allowance


def test_a_retry_after_holds_every_request_to_the_key(fake):
    """A 429 with retry-after holds the whole key: a match that starts meanwhile sends nothing until
    the wait has passed, though no request of its own was refused."""
    fake.default = {"calls": [("wait", {})], "delay_ms": 100}
    fake.capacity, fake.capacity_retry_after = 1, 1

    async def go():
        return await asyncio.gather(_match(fake, ["r/a", "r/b"], 2, 1, None, 5000),
                                    _match(fake, ["r/late"], 1, 2, None, 5000, after_429=True))
    played = asyncio.run(go())
    _clean(played[:1], 2)
    _clean(played[1:], 1)
    refused = min(r["at"] for r in fake.requests if r.get("throttled"))
    late = min(r["at"] for r in fake.requests if r["body"]["model"] == "r/late")
    assert late - refused >= 0.95, late - refused


def test_the_cap_comes_from_config():
    assert configured_cap({}) == CEILING
    assert configured_cap({"providers": {"max_concurrent_per_key": 500}}) == 500
    for bad in (0, -1, "8", 2.5, True):
        with pytest.raises(ConfigError, match="max_concurrent_per_key"):
            configured_cap({"providers": {"max_concurrent_per_key": bad}})
