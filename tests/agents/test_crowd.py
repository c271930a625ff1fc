"""A crowd long-polling one agent seat over REST (issue 50, F8): every waiter is answered with the turn
when it opens, none dropped, and the same keep-alive connections serve the next round. A real server
playing on Ray; seat 1, played by the test, holds each tick open until the crowd waits."""
from __future__ import annotations

import asyncio

import httpx

from orchestrator.agents import waits
from tests.api.util import bearer
from tests.waiting import until

CROWD = 100
TURN = "/api/v1/runs/{}/seats/{}/turn"
ACTIONS = "/api/v1/runs/{}/seats/{}/actions"


def _parked(run_id: str) -> bool:
    """Whether the server holds a shared ask of seat 0 (the crowd is waiting on the exchange)."""
    return any(key[1:] == (run_id, 0) and not fut.done() for asks in list(waits._out.values()) for key, fut in
               list(asks.items()))


def test_a_hundred_waiters_on_one_seat_are_all_answered_with_the_turn(srv, lab, token):
    body = {"scenario_id": "svc:custom-base-v1", "season_ticks": 10, "env": {"turn_timeout_ms": 300_000, "anchors": []},
            "roster": [{"provider": "agent", "model": "watched"}, {"provider": "agent", "model": "holder"}]}
    r = lab.post("/api/v1/runs", json=body)
    assert r.status_code == 201, r.text
    run_id = r.json()["run"]["run_id"]

    def turn(seat: int) -> dict:
        return lab.get(TURN.format(run_id, seat), params={"wait_ms": 10_000}).json()

    def act(seat: int, tick: int) -> None:
        r = lab.post(ACTIONS.format(run_id, seat), json={"tick": tick, "actions": [{"action": "wait"}]})
        assert r.status_code == 200, r.text

    def open_turn() -> dict | None:
        t = turn(1)
        return t if t["status"] == "your_turn" else None

    first = until(open_turn, 120, what="seat 1's first turn")
    tick = first["tick"]
    assert turn(0)["status"] == "your_turn"  # seat 0 in touch: its turn is open

    async def crowd(client: httpx.AsyncClient) -> list[httpx.Response]:
        asks = [asyncio.ensure_future(client.get(TURN.format(run_id, 0), params={"wait_ms": 20_000}))
                for _ in range(CROWD)]
        while not _parked(run_id):
            assert not any(a.done() for a in asks), [a.result().text for a in asks if a.done()][:1]
            await asyncio.sleep(0.05)
        await asyncio.to_thread(act, 1, tick)  # the tick plays; the next opens both seats' turns
        return await asyncio.gather(*asks)

    async def rounds() -> list[list[httpx.Response]]:
        nonlocal tick
        out = []
        limits = httpx.Limits(max_connections=CROWD, max_keepalive_connections=CROWD)
        async with httpx.AsyncClient(base_url=srv.url, headers=bearer(token), timeout=60, limits=limits) as client:
            for _ in range(2):  # the second round on the first's keep-alive connections
                await asyncio.to_thread(act, 0, tick)  # seat 0 has no open turn until the next tick
                out.append(await crowd(client))
                tick += 1
        return out

    try:
        for answers, at in zip(asyncio.run(rounds()), (first["tick"] + 1, first["tick"] + 2)):
            assert len(answers) == CROWD
            assert all(a.status_code == 200 for a in answers), [a.text for a in answers if a.status_code != 200][:1]
            got = [a.json() for a in answers]
            assert all(g["status"] == "your_turn" and g["tick"] == at for g in got), got[:1]
            assert len({g["deadline_ms"] for g in got}) == 1 and got[0]["observation"]["text"]
    finally:
        lab.post(f"/api/v1/runs/{run_id}/cancel")
