"""`until` on a series with an agent seat (docs/AGENTS.md, docs/RUNS.md): its trials leave the queue
in waves (orchestrator.runs.series.waves), so a target met by the first trials leaves the rest
unplayed and the agent is never asked a turn of them."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from tests.agents.conftest import play_rest, world_body
from tests.waiting import until


def test_an_agent_series_plays_only_the_trials_its_target_needed(srv, lab):
    body = world_body(ticks=10, trials=6, until={"half_width": 1e308})
    est = lab.post("/api/v1/runs/estimate", json=body).json()
    expected = est["batch"]["precision"]["expected_trials"]
    batch_id = lab.post("/api/v1/runs", json=body).json()["batch"]["batch_id"]
    run_ids = lab.get(f"/api/v1/batches/{batch_id}").json()["batch"]["run_ids"]
    with ThreadPoolExecutor(len(run_ids)) as pool:  # an agent that answers whichever trial asks
        answered = list(pool.map(lambda r: play_rest(lab, r, 0, lambda turn: [{"action": "gather"}]), run_ids))

    def ended():
        b = lab.get(f"/api/v1/batches/{batch_id}").json()["batch"]
        return b if b["stopped"] is not None else None
    batch = until(ended, 60, what=f"the end of series {batch_id}")
    runs = {r: lab.get(f"/api/v1/runs/{r}").json()["run"] for r in run_ids}
    played = [r for r in run_ids if runs[r]["stop_reason"] != "series_stopped"]
    assert expected == 2 == len(played) and batch["stopped"] == "precise"
    assert batch["counts"] == {"finished": 2, "cancelled": 4}
    for r, turns in zip(run_ids, answered):  # the agent was asked the played trials' turns only
        assert len(turns) == (10 if r in played else 0)
        assert r in played or (runs[r]["match_id"] is None and runs[r]["agent_turns"]["settled"] == 0)
