"""Arena model seats under the world's provider-fault rule (docs/SEATS.md): faults
counted and named as the world's seats count them, refusals and cut replies recorded as such, every
answered call priced by the one pricing rule. The fake provider on 127.0.0.1 (tests/seats/fake_provider.py)."""
import asyncio
import json
import time

import pytest

from engine.arena.games import GAMES
from engine.arena.play import Tools, play
from orchestrator.play.arena_seats import ArenaSeat
from orchestrator.records.turn import Said
from orchestrator.seats.base import SeatBase
from orchestrator.seats.faults import SeatFailed
from orchestrator.seats.player import Credential
from orchestrator.seats.prices import PriceTable

MODEL = "openai/gpt-5-mini"  # its cache reads have their own price in the shipped table


def seat_for(fake, model=MODEL, timeout_ms=5000, fmt="json"):
    loop = asyncio.new_event_loop()
    cred = Credential("k-good", fake.url + "/v1", None, private_ok=True)
    return ArenaSeat(0, {"model": model, "provider": "router", "format": fmt}, credential=cred,
                     turn_timeout_ms=timeout_ms, loop=loop)


def game_with(seat, first_seat=0):
    """A Connect Four game of the seat against the random player; the seat's failure raised as is."""
    try:
        return play("arena:connect-four", [{"name": "m", "model": MODEL}, {"name": "r", "model": "local/random"}],
                    first_seat=first_seat, tools=Tools(), answerers={0: seat})
    finally:
        seat.close()
        seat.loop.close()


def test_cached_input_is_priced_at_the_cache_price_and_a_routers_own_cost_wins(fake):
    fake.script(MODEL, {"text": '{"move": "4"}', "usage": (1_000_000, 10_000), "cached": 800_000},
                {"text": '{"move": "4"}', "usage": (1000, 10), "cost": 0.5})
    seat = seat_for(fake)
    position = GAMES["arena:connect-four"].new()
    try:
        assert seat.answer(position, None) == "4"
        prices = PriceTable.shipped()
        cached = (200_000 * 0.25 + 800_000 * 0.025 + 10_000 * 2.0) / 1e6
        assert seat.usage["usd"] == pytest.approx(cached)
        assert cached < prices.cost("router", MODEL, 1_000_000, 10_000)  # not the full input price
        assert seat.answer(position, None) == "4"
        assert seat.usage["usd"] == pytest.approx(cached + 0.5)
        assert seat.usage["input_tokens"] == 1_001_000 and seat.usage["output_tokens"] == 10_010
    finally:
        seat.close()
        seat.loop.close()


def test_a_hanging_provider_is_counted_and_fails_the_run_at_the_third_call(fake):
    fake.defaults[MODEL] = {"text": '{"move": "4"}', "delay_ms": 30_000}
    seat = seat_for(fake, timeout_ms=300)
    t0 = time.perf_counter()
    with pytest.raises(SeatFailed) as e:
        game_with(seat)
    assert time.perf_counter() - t0 < 5
    assert e.value.code == "provider_timeout" and e.value.envelope()["error"] == "provider_timeout"
    assert str(e.value).startswith(f"roster[0] (model {MODEL}): the router provider did not answer in time")
    assert seat.turns["timed_out"] == 3 and seat.turns["answered"] == 0 and seat.turns["provider_errors"] == 0
    assert [r["tick"] for r in seat.transcript] == [0, 0, 0]
    assert all("did not answer" in r["error"] and r["latency_ms"] >= 250 for r in seat.transcript)


@pytest.mark.parametrize("step,code,cause", [
    ({"status": 400, "body": json.dumps({"error": {"message": "context_length_exceeded"}})}, "provider_rejected",
     "HTTP 400: context_length_exceeded"),
    ({"body": "<html>gateway</html>"}, "provider_rejected", "not JSON"),
    ({"body": json.dumps({"error": {"message": "upstream overloaded"}})}, "provider_rejected", "upstream overloaded"),
    ({"status": 503, "headers": {"retry-after": "0.05"}}, "provider_unreachable", "HTTP 503"),
], ids=["http_400", "not_json", "error_object", "http_503"])
def test_provider_faults_fail_the_run_under_their_code(fake, step, code, cause):
    # a deadline no loaded machine misses (a first call timed out would count as a timeout, not this fault);
    # a 503 is retried until the deadline, so its deadline stays short
    fake.defaults[MODEL] = step
    seat = seat_for(fake, timeout_ms=1000 if code == "provider_unreachable" else 5000)
    with pytest.raises(SeatFailed) as e:
        game_with(seat)
    assert e.value.code == code and cause in str(e.value)
    assert str(e.value).startswith(f"roster[0] (model {MODEL}): the router provider")
    assert seat.turns["provider_errors"] == 3 and seat.turns["answered"] == 0
    assert len(seat.transcript) == 3 and all(cause in r["error"] for r in seat.transcript)


HANG = {"text": '{"move": "4"}', "delay_ms": 2000}


def test_timeouts_count_with_other_faults_and_a_usable_reply_ends_a_streak(fake):
    # timeout, 400, timeout: three faulted calls in a row, whatever their causes; the last names the code
    fake.script(MODEL, HANG, {"status": 400}, HANG)
    seat = seat_for(fake, timeout_ms=300)
    with pytest.raises(SeatFailed) as e:
        game_with(seat)
    assert e.value.code == "provider_timeout" and "3 ticks in a row" in str(e.value)
    assert seat.turns["timed_out"] == 2 and seat.turns["provider_errors"] == 1

    # timeout, 400, a move; then 400, timeout, a move: never three in a row, the game goes on
    fake.script(MODEL, HANG, {"status": 400}, {"text": '{"move": "4"}'}, {"status": 400}, HANG,
                {"text": '{"move": "3"}'})
    fake.defaults[MODEL] = {"text": '{"move": "resign"}'}
    seat = seat_for(fake, timeout_ms=300)
    out = game_with(seat)
    assert out["results"]["game"]["termination"] == "resignation"
    assert seat.turns["timed_out"] == 2 and seat.turns["provider_errors"] == 2 and seat.turns["answered"] == 3


def test_a_refusal_and_a_cut_reply_are_recorded_as_such_and_re_asked_with_that_reason(fake):
    secret = "I will not play games about secret plans"
    fake.script(MODEL, {"refusal": secret}, {"text": '{"move": "', "finish": "length"})
    fake.defaults[MODEL] = {"text": '{"move": "resign"}'}
    seat = seat_for(fake)
    out = game_with(seat)
    assert out["results"]["game"]["termination"] == "resignation"
    refusal, cut, resign = seat.transcript
    assert refusal["refusal"] == secret and refusal["refused"] == ["refusal: refusal"]
    assert refusal["truncated"] is False and refusal["actions"] == "[]" and refusal["error"] is None
    assert cut["truncated"] is True and cut["refused"] == ["truncated: truncated"] and cut["refusal"] is None
    assert resign["refusal"] is None and resign["truncated"] is False and resign["refused"] == []
    asked = [b["messages"][-1]["content"] for b in fake.bodies(MODEL)]
    assert "refused to answer" in asked[1] and "token" in asked[2]
    assert "not a column" not in asked[1] + asked[2]
    assert seat.turns["answered"] == 3 and seat.turns["provider_errors"] == seat.turns["timed_out"] == 0
    assert out["turns"][0]["illegal"] == 2 and out["moves"] == []  # both count as refused answers, none forfeits


def test_a_rejected_key_fails_at_once_and_its_call_is_in_the_transcript(fake):
    fake.rejected_keys.add("k-good")
    seat = seat_for(fake)
    with pytest.raises(SeatFailed) as e:
        game_with(seat)
    assert e.value.code == "provider_key_rejected" and len(fake.bodies(MODEL)) == 1
    assert seat.turns["provider_errors"] == 1 and "rejected the key" in seat.transcript[0]["error"]


def test_an_arena_seats_turn_is_a_world_seats_its_reply_in_the_one_encoding(fake):
    # a 400 then a tools-format move: one turn asked (the call repeated after a fault is the same turn),
    # two transcript rows, the move's call stored as the world's seats store theirs and read back
    fake.script(MODEL, {"status": 400}, {"calls": [("move", {"move": "4"})]})
    fake.defaults[MODEL] = {"text": '{"move": "resign"}'}
    seat = seat_for(fake, fmt="tools")
    assert isinstance(seat, SeatBase) and seat.turn_s == 5.0
    game_with(seat)
    first, second = seat.transcript[:2]
    assert first["error"] and first["reply"] == "" and second["actions"] == '["4"]'
    said = Said.decode(second["reply"])
    assert [(c.name, c.arguments) for c in said.calls] in ([("move", {"move": "4"})], [("move", '{"move": "4"}')])
    assert seat.usage["agent_turns"] == seat.turns["answered"] == len(seat.transcript) - 1
