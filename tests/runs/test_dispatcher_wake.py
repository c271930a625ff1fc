"""A worker call that comes back wakes the dispatcher's loop through its future's done callback: the
loop neither polls Ray nor waits out its bound (PROGRESS_EVERY_S) before recording what ended."""
import time

from orchestrator.runs.head import dispatcher
from tests.runs.conftest import local_body, wait_terminal


def test_a_call_that_comes_back_wakes_the_loop(srv, lab, monkeypatch):
    wait_terminal(lab, lab.post("/api/v1/runs", json=local_body(season_ticks=10)).json()["run"]["run_id"])
    # the launch below wakes the loop; after it only a stop or a call's callback ends its minute-long wait
    monkeypatch.setattr(dispatcher, "PROGRESS_EVERY_S", 60.0)
    begun = time.monotonic()
    out = lab.post("/api/v1/runs", json=local_body(trials=3, season_ticks=30)).json()
    for run_id in out["batch"]["run_ids"]:
        wait_terminal(lab, run_id, timeout=50)
        assert lab.get(f"/api/v1/runs/{run_id}").json()["run"]["status"] == "finished"
    assert time.monotonic() - begun < 30
