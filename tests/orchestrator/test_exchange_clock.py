"""The agents exchange reads the service's Clock (orchestrator.agents.exchange): the deadline an agent
reads is in the service's time, and the absence window runs from how long the match has played, not
from a time of day another process read. The exchange in-process, the way its actor runs it."""
from __future__ import annotations

import asyncio
import pickle

from orchestrator.agents.exchange import Exchange
from orchestrator.clock import ManualClock

T0 = 1_900_000_000_000
TURN = {"tick": 0, "season_ticks": 5, "actions_per_turn": 1, "observation": {"text": "t", "state": {}},
        "directions": None}


def test_the_deadline_an_agent_reads_is_in_the_service_clock_time():
    clock = ManualClock(T0)
    ex = Exchange(absent_s=60, clock=clock)

    async def go():
        playing = asyncio.ensure_future(ex.open_turn("r", 0, TURN, 5_000, 0))
        clock.advance(1_500)  # the agent's first contact, 1.5 s of service time later
        turn = await ex.ask("r", 0, 1_000)
        assert turn["status"] == "your_turn" and turn["deadline_ms"] == T0 + 1_500 + 5_000
        clock.advance(250)
        ack = await ex.submit("r", 0, 0, [], "[]", "token:t")
        assert ack["ok"]
        got = await playing
        assert got["latency_ms"] == 250  # from the contact that started the seat's clock, on the same clock
    asyncio.run(go())


def test_a_turn_past_its_deadline_on_the_clock_is_closed_to_actions():
    clock = ManualClock(T0)
    ex = Exchange(absent_s=60, clock=clock)

    async def go():
        playing = asyncio.ensure_future(ex.open_turn("r", 0, TURN, 5_000, 0))
        assert (await ex.ask("r", 0, 1_000))["status"] == "your_turn"
        clock.advance(5_001)
        assert "closed" in await ex.submit("r", 0, 0, [], "[]", "token:t")
        await ex.end("r", None)
        assert (await playing)["missed"]
    asyncio.run(go())


def test_a_seat_never_in_touch_once_the_match_played_past_the_window_is_absent_at_once():
    ex = Exchange(absent_s=60, clock=ManualClock(T0))

    async def go():
        return await asyncio.wait_for(ex.open_turn("r", 0, TURN, 5_000, 60_000), 5)
    assert asyncio.run(go()) == {"absent": True, "absent_s": 60.0}


def test_a_manual_clock_sent_to_another_process_reads_the_time_it_was_sent():
    clock = ManualClock(T0)
    copy = pickle.loads(pickle.dumps(clock))
    clock.advance(1_000)
    assert copy.now_ms() == T0
    copy.advance(5)
    assert copy.now_ms() == T0 + 5
