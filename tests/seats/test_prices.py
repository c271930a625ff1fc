"""The price table, self-hosted pricing, and the estimate."""
import pytest

from orchestrator.seats import PriceTable, estimate
from orchestrator.seats.prices import turn_tokens


def test_lookup_reads_router_ids_native_ids_and_falls_back():
    t = PriceTable.shipped()
    assert t.lookup("router", "openai/gpt-4o") == (2.5, 10.0, "table")
    assert t.lookup("anthropic", "claude-sonnet-4-5-20250929") == (3.0, 15.0, "table")
    assert t.lookup("anthropic", "claude-3-5-haiku-20241022") == (0.8, 4.0, "table")
    assert t.lookup("openai", "gpt-4o-2024-08-06") == (2.5, 10.0, "table")
    assert t.lookup("router", "nobody/knows") == (*t.fallback, "fallback")
    assert t.lookup("local", "local/random")[2] == "free" and t.lookup("ollama", "llama3")[2] == "free"
    assert t.cost("router", "openai/gpt-4o", 1_000_000, 100_000) == pytest.approx(3.5)


def test_self_hosted_seats_are_free_unless_the_key_carries_a_price():
    t = PriceTable.shipped()
    assert t.lookup("openai-compatible", "qwen2.5-7b")[2] == "free"
    assert t.cost("openai-compatible", "qwen2.5-7b", 10**6, 10**6) == 0.0
    roster = [{"model": "qwen2.5-7b", "provider": "openai-compatible"}, {"model": "llama3", "provider": "ollama"}]
    free = estimate(roster, 100)
    assert free["high"] == 0.0 and [s["priced"] for s in free["seats"]] == ["free", "free"]
    priced = estimate(roster, 100, key_prices={"openai-compatible": [0.5, 1.5]})
    assert [s["priced"] for s in priced["seats"]] == ["key", "free"]
    assert 0 < priced["seats"][0]["usd"]["low"] < priced["seats"][0]["usd"]["high"] and priced["seats"][1]["usd"]["high"] == 0
    assert PriceTable.as_of() == "2025-10-01"


def test_estimate_scales_with_ticks_and_trials_and_skips_free_seats():
    roster = [{"model": "openai/gpt-4o"}, {"model": "local/random", "provider": "local"},
              {"model": "claude-haiku-4-5", "provider": "anthropic", "reasoning": "high"}]
    one = estimate(roster, 100)
    assert 0 < one["low"] < one["high"]
    assert one["seats"][1]["usd"] == {"low": 0.0, "high": 0.0}
    three = estimate(roster, 200, trials=3)
    assert three["high"] == pytest.approx(6 * one["high"], rel=1e-6)
    assert three["seats"][0]["agent_turns"] == 600
    # reasoning and longer directions cost more; max_tokens caps the output assumption
    assert one["seats"][2]["usd"]["high"] > estimate([dict(roster[2], reasoning="off")], 100)["high"]
    long = dict(roster[0], instructions="x" * 4000)
    assert turn_tokens(long)["input"][0] > turn_tokens(roster[0])["input"][0] + 900
    assert turn_tokens(dict(roster[2], max_tokens=500))["output"][1] == 500


def test_cache_reads_and_writes_have_their_own_prices_defaulting_to_the_input_price():
    t = PriceTable.shipped()
    assert t.cache_prices("anthropic", "claude-sonnet-4-5-20250929") == (0.3, 3.75)
    assert t.cache_prices("router", "openai/gpt-5-mini") == (0.025, 0.25)
    assert t.cache_prices("router", "google/gemini-2.5-pro") == (1.25, 1.25)  # none stated: full input price
    assert t.cache_prices("router", "nobody/knows") == (t.fallback[0], t.fallback[0])
    # 1 M input of which 600 k read from the cache and 100 k written to it, 10 k out
    assert t.cost("anthropic", "claude-sonnet-4-5", 10**6, 10**4, 600_000, 100_000) == pytest.approx(
        (300_000 * 3.0 + 600_000 * 0.3 + 100_000 * 3.75 + 10_000 * 15.0) / 1e6)
    assert t.cost("ollama", "llama3", 10**6, 10**6, 5 * 10**5) == 0.0
