"""The price table, its refresh from the router's model list, and the estimate."""
import pytest

from orchestrator.seats import PriceTable, estimate, refresh
from orchestrator.seats.prices import turn_tokens
from tests.seats.conftest import run, with_client


def test_lookup_reads_router_ids_native_ids_and_falls_back():
    t = PriceTable.shipped()
    assert t.lookup("router", "openai/gpt-4o") == (2.5, 10.0, "table")
    assert t.lookup("anthropic", "claude-sonnet-4-5-20250929") == (3.0, 15.0, "table")
    assert t.lookup("anthropic", "claude-3-5-haiku-20241022") == (0.8, 4.0, "table")
    assert t.lookup("openai", "gpt-4o-2024-08-06") == (2.5, 10.0, "table")
    assert t.lookup("router", "nobody/knows") == (*t.fallback, "fallback")
    assert t.lookup("local", "local/random")[2] == "free" and t.lookup("ollama", "llama3")[2] == "free"
    assert t.cost("router", "openai/gpt-4o", 1_000_000, 100_000) == pytest.approx(3.5)


def test_refresh_takes_prices_per_token_from_the_router_model_list(fake):
    fake.models = [{"id": "new/model", "pricing": {"prompt": "0.000002", "completion": "0.000008"}},
                   {"id": "openai/gpt-4o", "pricing": {"prompt": "0.000003", "completion": "0.00001"}},
                   {"id": "openrouter/auto", "pricing": {"prompt": "-1", "completion": "-1"}},
                   {"id": "broken"}]
    t = run(with_client(lambda c: refresh(c, base_url=fake.url + "/v1")))
    assert t.lookup("router", "new/model") == (2.0, 8.0, "table")
    assert t.lookup("router", "openai/gpt-4o") == (3.0, 10.0, "table")
    assert t.lookup("router", "openrouter/auto")[2] == "fallback"
    unreachable = run(with_client(lambda c: refresh(c, base_url="http://127.0.0.1:9/v1")))
    assert unreachable.models == PriceTable.shipped().models


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
