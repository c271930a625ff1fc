"""Long-polls on one seat share one ask of the exchange (orchestrator.agents.waits; issue 38, F4): a
crowd of callers waiting on a seat costs the exchange actor one call, and the turn that opens answers
them all from its one answer. The real exchange, as a Ray actor; its asks are counted."""
from __future__ import annotations

import asyncio

import pytest
import ray

from orchestrator.agents import waits
from orchestrator.agents.exchange import Exchange
from tests.waiting import until_async

WAITERS = 300
TURN = {"tick": 3, "season_ticks": 10, "actions_per_turn": 1, "observation": {"text": "t", "state": {}},
        "directions": None}


class CountedExchange(Exchange):
    def __init__(self):
        super().__init__(absent_s=60)
        self.asks = 0

    async def ask(self, run_id: str, seat: int, wait_ms: int) -> dict:
        self.asks += 1
        return await super().ask(run_id, seat, wait_ms)

    async def asked(self) -> int:
        return self.asks


@pytest.fixture
def exchange():
    handle = ray.remote(num_cpus=0, max_concurrency=1000)(CountedExchange).remote()
    yield handle
    ray.kill(handle)


def test_a_crowd_waiting_on_one_seat_is_one_ask_and_all_wake_when_the_turn_opens(exchange):
    async def go():
        crowd = [asyncio.ensure_future(waits.ask(exchange, "run_a", 0, 20_000)) for _ in range(WAITERS)]
        impatient = asyncio.ensure_future(waits.ask(exchange, "run_a", 0, 50))
        other_seat = asyncio.ensure_future(waits.ask(exchange, "run_a", 1, 20_000))
        await until_async(lambda: _asked(exchange, 2), 30, what="the two seats' asks to reach the exchange")
        assert await impatient == {"status": "waiting"}  # its own wait ran out; the shared ask goes on
        assert not any(w.done() for w in crowd)
        playing = asyncio.ensure_future(exchange.open_turn.remote("run_a", 0, TURN, 60_000, 0))
        answers = await asyncio.gather(*crowd)
        assert all(a is answers[0] for a in answers)  # one answer, shared
        assert answers[0]["status"] == "your_turn" and answers[0]["tick"] == 3
        assert await exchange.asked.remote() == 2  # one per seat, however many waited
        assert not other_seat.done()  # seat 1's turn did not open
        ack = await exchange.submit.remote("run_a", 0, 3, [], "[]", "token:t")
        assert ack["ok"] and (await playing)["actions"] == []
        await exchange.end.remote("run_a", 3)
        assert (await other_seat)["status"] == "ended"
    asyncio.run(go())


async def _asked(exchange, n: int) -> bool:
    return await exchange.asked.remote() >= n


def test_a_caller_asking_for_no_wait_asks_on_its_own(exchange):
    async def go():
        waiting = asyncio.ensure_future(waits.ask(exchange, "run_b", 0, 20_000))
        await until_async(lambda: _asked(exchange, 1), 30, what="the long-poll to reach the exchange")
        assert await waits.ask(exchange, "run_b", 0, 0) == {"status": "waiting"}
        assert await exchange.asked.remote() == 2
        await exchange.end.remote("run_b", None)
        assert (await waiting)["status"] == "ended"
    asyncio.run(go())
