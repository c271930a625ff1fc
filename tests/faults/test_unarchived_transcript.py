"""A run whose match the archive will not take keeps its transcript (issue 38): an agent plays a season
while the archive's disk fills; the result waits out `record_patience_s`, the run fails naming the
cause, and its owner still reads every metered turn (the store's rows, which go only once the match
is archived)."""
from __future__ import annotations

import httpx

from tests.faults.conftest import FIRST_TICKS_S, fill
from tests.runs.conftest import account
from tests.waiting import until

TICKS = 10


def test_a_run_the_archive_refuses_fails_naming_why_and_keeps_every_metered_turn(archive_apart, archive_disk):
    s = archive_apart  # record_patience_s = 1, agent_absent_s = 30, the archive on its own disk
    filler = None
    try:
        with s.client(account(s.core)) as c:
            body = {"scenario_id": "svc:custom-base-v1", "season_ticks": TICKS,
                    "env": {"turn_timeout_ms": 30000, "anchors": []},
                    "roster": [{"provider": "agent", "model": "filler"}, {"model": "local/random"}]}
            rid = c.post("/api/v1/runs", json=body).json()["run"]["run_id"]
            for tick in range(TICKS):
                turn = until(lambda: (t := _turn(c, rid))["status"] == "your_turn" and t, FIRST_TICKS_S,
                             what=f"tick {tick}")
                if tick == TICKS - 1:
                    filler = fill(archive_disk)  # the match ends with this answer, on a full archive
                r = c.post(f"/api/v1/runs/{rid}/seats/0/actions", json={"tick": turn["tick"], "actions": [
                    {"action": "say", "text": f"turn {tick}"}]})
                assert r.status_code == 200, r.text
            run = until(lambda: (r := c.get(f"/api/v1/runs/{rid}").json()["run"])["status"] == "failed" and r, 60,
                        what="the run failing")
            turns = c.get(f"/api/v1/runs/{rid}/transcript", params={"seat": 0}).json()["turns"]
    finally:
        if filler is not None:
            filler.unlink()
    message = run["error"]["message"]
    assert "could not be archived" in message and "no space left on device" in message.lower(), message
    assert run["roster"][0]["usage"]["agent_turns"] == TICKS
    assert [t["tick"] for t in turns] == list(range(TICKS))  # every metered turn, as the agent sent it
    assert [t["actions"] for t in turns] == [[{"action": "say", "text": f"turn {k}"}] for k in range(TICKS)]


def _turn(c: httpx.Client, run_id: str) -> dict:
    return c.get(f"/api/v1/runs/{run_id}/seats/0/turn", params={"wait_ms": 5000}).json()
