"""Forks over REST (CONTRACT.md section 16): a played world run goes on from tick k with another roster."""
import httpx
import numpy as np
import pytest

from analytics.archive.store import Archive
from engine import events
from tests.runs.conftest import account, local_body, wait_terminal

ROSTER = [{"model": "local/greedy-harvester"}, {"model": "local/honest-trader"}]


@pytest.fixture(scope="module")
def owner(srv):
    with srv.client(account(srv.core)) as c:
        yield c


@pytest.fixture(scope="module")
def original(owner):
    body = local_body(season_ticks=40, roster=ROSTER, env={"seed": 5, "spawn_seed": 6})
    return wait_terminal(owner, owner.post("/api/v1/runs", json=body).json()["run"]["run_id"], timeout=300)


def _events(srv, match_id: str) -> dict:
    return Archive.of(srv.data_dir, srv.core.config).read_events(match_id)[0]


def test_a_fork_that_changes_nothing_replays_the_original(srv, owner, original):
    run = original["run"]
    launched = owner.post("/api/v1/runs", json={"fork": {"run_id": run["run_id"], "tick": 17}})
    assert launched.status_code == 201, launched.text
    fork = wait_terminal(owner, launched.json()["run"]["run_id"])
    view = fork["run"]
    assert view["status"] == "finished"
    assert view["effective"]["fork"] == {"run_id": run["run_id"], "match_id": run["match_id"], "tick": 17,
                                         "continuation_seed": None, "arm": "fork"}
    assert view["agent_turns"] == {"reserved": 2 * (40 - 17), "settled": 2 * (40 - 17)}
    assert view["effective"]["seed"] == run["effective"]["seed"] and view["scenario_id"] == run["scenario_id"]
    assert fork["results"]["fork"] == {"run_id": run["run_id"], "tick": 17}
    assert original["results"]["fork"] is None and run["effective"]["fork"] is None
    assert events.equal(_events(srv, run["match_id"]), _events(srv, view["match_id"]))
    assert [a["fitness_index"] for a in fork["results"]["agents"]] == \
        [a["fitness_index"] for a in original["results"]["agents"]]


def test_a_changed_seat_plays_from_tick_k_under_its_new_name(srv, owner, original):
    run = original["run"]
    body = {"fork": {"run_id": run["run_id"], "tick": 20, "seats": {"0": {"model": "local/random"}}}}
    est = owner.post("/api/v1/runs/estimate", json=body)
    assert est.status_code == 200, est.text
    assert est.json()["batch"]["agent_turns"] == 2 * 20
    fork = wait_terminal(owner, owner.post("/api/v1/runs", json=body).json()["run"]["run_id"])
    roster = fork["run"]["roster"]
    assert [s["model"] for s in roster] == ["local/random", "local/honest-trader"]
    assert roster[0]["name"] == "random" and roster[1]["name"] == original["run"]["roster"][1]["name"]
    assert fork["results"]["agents"][0]["model"] == "local/random"
    mine, theirs = _events(srv, fork["run"]["match_id"]), _events(srv, run["match_id"])
    before = int((theirs["tick"] < 20).sum())
    assert all(np.array_equal(mine[c][:before], theirs[c][:before]) for c in events.COLUMNS)
    assert not events.equal(mine, theirs)
    with httpx.Client(base_url=srv.url) as anon:
        report = anon.get(fork["run"]["links"]["match"]).json()
        replay = anon.get(fork["run"]["links"]["replay"], params={"format": "json"}).json()
        html = anon.get(fork["run"]["links"]["match"], params={"format": "html"}).text
    assert report["fork"] == {"match_id": run["match_id"], "tick": 20}
    assert replay["frames"][0]["tick"] == 0 and replay["holdings"]  # rebuilt from tick 0, holdings and all
    assert f"/api/matches/{run['match_id']}/report?format=html" in html
