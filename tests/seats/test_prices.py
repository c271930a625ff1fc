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
    assert PriceTable.shipped().as_of == "2026-11-28"


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


def test_the_shipped_table_has_the_current_models_and_says_where_each_price_was_read():
    import json
    from importlib import resources

    data = json.loads(resources.files("orchestrator.seats").joinpath("prices.json").read_text())
    assert {"openai", "anthropic", "google", "openrouter"} <= set(data["sources"])
    assert all(src["read"] and src.get("pages") or src.get("rows") for src in data["sources"].values())
    t = PriceTable.shipped()
    assert t.lookup("anthropic", "claude-opus-5-5") == (4.0, 20.0, "table")
    assert t.cache_prices("anthropic", "claude-sonnet-5-5") == (0.1, 2.5)
    assert t.lookup("openai", "gpt-6.1-terra") == (1.0, 5.0, "table")
    assert t.lookup("router", "google/gemini-3.5-flash")[:2] == (1.5, 9.0)


def test_a_router_list_read_over_the_shipped_table(tmp_path):
    from orchestrator.seats.price_update import rows
    from orchestrator.seats.prices import write_override

    assert PriceTable.for_data_dir(tmp_path).as_of == PriceTable.shipped().as_of  # no override: shipped
    listed = rows([{"id": "openai/gpt-4o", "pricing": {"prompt": "0.000001", "completion": "0.000004"}},
                   {"id": "new/model", "pricing": {"prompt": "0.0000003", "completion": "0.0000012",
                                                   "input_cache_read": "0.00000003"}},
                   {"id": "openrouter/auto", "pricing": {"prompt": "-1", "completion": "-1"}},
                   {"id": "no/pricing"}, {"id": "bad/pricing", "pricing": {"prompt": "free", "completion": "0"}},
                   "not a model"])
    assert listed == {"openai/gpt-4o": [1.0, 4.0], "new/model": [0.3, 1.2, 0.03, 0.3]}
    write_override(tmp_path, listed, "2026-01-02", "http://router/models")
    t = PriceTable.for_data_dir(tmp_path)
    assert t.as_of == "2026-01-02"
    assert t.lookup("router", "openai/gpt-4o") == (1.0, 4.0, "table")       # the router's row wins
    assert t.lookup("anthropic", "claude-opus-5-5") == (4.0, 20.0, "table")  # shipped rows stay
    assert t.cache_prices("router", "new/model") == (0.03, 0.3)
    write_override(tmp_path, {"openai/gpt-4o": [9.0, 9.0]}, "2026-02-03", "http://router/models")
    assert PriceTable.for_data_dir(tmp_path).lookup("router", "openai/gpt-4o")[:2] == (9.0, 9.0)  # read again


def test_a_table_older_than_90_days_is_named_in_a_warning():
    import datetime as dt

    from orchestrator.seats.prices import stale_warning

    assert stale_warning("2026-01-01", dt.date(2026, 4, 1)) is None  # 90 days
    said = stale_warning("2026-01-01", dt.date(2026, 4, 2))
    assert "2026-01-01" in said and "91 days" in said and "studio prices update" in said
