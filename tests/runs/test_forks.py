"""Forks over REST (docs/FORKS.md): a played world run goes on from tick k with another roster."""
import httpx
import numpy as np
import pytest

from analytics.archive.store import Archive
from engine import events
from orchestrator.errors import STATUS
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
    assert "fork" not in original["results"] and run["effective"]["fork"] is None
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


def test_a_forked_series_with_control_pairs_its_arms_and_reports_the_effect(owner, original):
    run = original["run"]
    body = {"fork": {"run_id": run["run_id"], "tick": 10, "seats": {"0": {"model": "local/random"}},
                     "control": True}, "trials": 3, "name": "what if random"}
    est = owner.post("/api/v1/runs/estimate", json=body).json()["batch"]
    assert est["trials"] == 3 and est["agent_turns"] == 2 * 30 * 3 * 2
    launched = owner.post("/api/v1/runs", json=body).json()
    batch = launched["batch"]
    assert batch["trials"] == 3 and len(batch["run_ids"]) == 6
    views = [wait_terminal(owner, r) for r in batch["run_ids"]]
    forks = [v["run"]["effective"]["fork"] for v in views]
    assert [f["arm"] for f in forks] == ["fork"] * 3 + ["control"] * 3
    seeds = [f["continuation_seed"] for f in forks]
    assert seeds[:3] == seeds[3:] and len(set(seeds[:3])) == 3 and None not in seeds
    assert [v["run"]["roster"][0]["model"] for v in views] == ["local/random"] * 3 + ["local/greedy-harvester"] * 3
    assert "control" in views[3]["run"]["name"]
    got = owner.get(f"/api/v1/batches/{batch['batch_id']}").json()["batch"]
    assert got["trials"] == 3 and len(got["run_ids"]) == 6
    effect = {(e["seat"], e["metric"]): e for e in got["effect"]}
    assert set(effect) == {(0, m) for m in ("fitness_index", "survival", "economy", "social", "competitiveness",
                                              "exploration")}
    fit = effect[(0, "fitness_index")]
    diffs = [views[j]["results"]["agents"][0]["fitness_index"] - views[3 + j]["results"]["agents"][0]["fitness_index"]
             for j in range(3)]
    assert fit["n"] == 3 and fit["mean"] == pytest.approx(np.mean(diffs), abs=1e-3)
    assert fit["low"] is None or fit["low"] <= fit["mean"] <= fit["high"]


@pytest.mark.parametrize("fork, extra, code, words", [
    ("x", {}, "bad_fork", "fork: should be a JSON object"),
    ({"tick": 3}, {}, "bad_fork", "fork.run_id is required"),
    ({"run_id": "R", "tick": "3"}, {}, "bad_fork", "fork.tick: should be an integer"),
    ({"run_id": "R"}, {}, "bad_fork", "fork.tick is required"),
    ({"run_id": "R", "tick": 3, "seats": []}, {}, "bad_fork", "fork.seats: should be a JSON object"),
    ({"run_id": "R", "tick": 3, "when": 1}, {}, "bad_fork", "unknown field 'when'"),
    ({"run_id": "R", "tick": 0}, {}, "bad_fork", "fork.tick: 0 is outside 1..39"),
    ({"run_id": "R", "tick": 40}, {}, "bad_fork", "fork.tick: 40 is outside 1..39"),
    ({"run_id": "R", "tick": 3, "seats": {"2": {"model": "local/random"}}}, {}, "bad_fork",
     "'2' is not a seat index of the original"),
    ({"run_id": "R", "tick": 3, "control": True}, {}, "bad_fork", "fork.control: a control arm needs a series"),
    ({"run_id": "R", "tick": 3}, {"scenario_id": "svc:other"}, "bad_fork", "scenario_id: a fork plays the original's"),
    ({"run_id": "R", "tick": 3}, {"roster": ROSTER}, "bad_fork", "roster cannot be sent with fork"),
    ({"run_id": "R", "tick": 3}, {"season_ticks": 50}, "bad_fork", "season_ticks cannot be sent with fork"),
    ({"run_id": "R", "tick": 3}, {"env": {}}, "bad_fork", "env cannot be sent with fork"),
    ({"run_id": "R", "tick": 3}, {"seed_mode": "vary"}, "bad_fork", "seed_mode cannot be sent with fork"),
    ({"run_id": "run_nope", "tick": 3}, {}, "unknown_run", "fork.run_id: no run 'run_nope'"),
    ({"run_id": "R", "tick": 3, "seats": {"1": {"model": "local/sleepy"}}}, {}, "bad_roster", "fork.seats.1"),
    ({"run_id": "R", "tick": 3, "seats": {"1": {"name": "x"}}}, {}, "bad_roster", "fork.seats.1: model is required"),
    ({"run_id": "R", "tick": 3, "seats": {"1": {"model": "m", "temperature": 9}}}, {}, "bad_roster",
     "fork.seats.1.temperature"),
    ({"run_id": "R", "tick": 3, "seats": {"0": {"model": "vendor/m"}}}, {}, "router_key_required", "fork.seats.0"),
    ({"run_id": "R", "tick": 3, "seats": {"0": {"model": "m", "provider": "openai"}}}, {}, "provider_key_required",
     "fork.seats.0"),
    ({"run_id": "R", "tick": 3, "seats": {"0": {"model": "m", "provider": "fax"}}}, {}, "bad_provider",
     "fork.seats.0"),
    ({"run_id": "R", "tick": 3, "seats": {"0": {"model": "local/random", "skills": ["usk_nope"]}}}, {},
     "unknown_skill", "fork.seats.0"),
])
def test_bad_forks_are_refused_saying_what_to_change(owner, original, fork, extra, code, words):
    if isinstance(fork, dict) and fork.get("run_id") == "R":
        fork = dict(fork, run_id=original["run"]["run_id"])
    for path in ("/api/v1/runs/estimate", "/api/v1/runs"):
        r = owner.post(path, json={"fork": fork, **extra})
        assert r.status_code == STATUS[code], r.text
        assert r.json()["error"] == code and words in r.json()["message"], r.json()


def test_only_an_ended_world_run_of_this_account_forks(srv, owner, original):
    with srv.client(account(srv.core)) as other:
        r = other.post("/api/v1/runs/estimate", json={"fork": {"run_id": original["run"]["run_id"], "tick": 3}})
    assert r.status_code == 404 and r.json()["error"] == "unknown_run"
    queued = owner.post("/api/v1/runs", json=local_body(season_ticks=2000)).json()["run"]["run_id"]
    r = owner.post("/api/v1/runs/estimate", json={"fork": {"run_id": queued, "tick": 3}})
    owner.post(f"/api/v1/runs/{queued}/cancel")
    assert r.status_code == 400 and r.json()["error"] == "bad_fork"
    assert "finished or cancelled" in r.json()["message"]


def test_python_fork_is_the_same_operation(srv, original):
    from studio_client import StudioError

    from api.python import Studio

    token = account(srv.core)
    run = original["run"]
    with Studio.connect(srv.url, token=token) as other:  # another account: the run is not its own
        with pytest.raises(StudioError) as e:
            other.fork(run["run_id"], 5)
        assert e.value.code == "unknown_run"
    owner_id = srv.core.store.one("SELECT account_id FROM runs WHERE id = ?", (run["run_id"],))["account_id"]
    with Studio.connect(srv.url, token=_token_of(srv, owner_id)) as studio:
        launched = studio.fork(run["run_id"], 25, seats={1: {"model": "local/aggressive-raider"}}, trials=2,
                               control=True, name="raider from 25")
        done = studio.wait_series(launched["batch"]["batch_id"], timeout_s=120)["batch"]
        assert len(done["run_ids"]) == 4 and {e["seat"] for e in done["effect"]} == {1}
        one = studio.get_run(id=done["run_ids"][0])
        assert one["run"]["name"].startswith("raider from 25") and one["results"]["fork"]["tick"] == 25
        with pytest.raises(StudioError) as e:
            studio.fork(run["run_id"], 25, control=True)
        assert e.value.code == "bad_fork" and "trials of 2 or more" in e.value.message


def _token_of(srv, account_id: str) -> str:
    from orchestrator import auth

    email = srv.core.store.one("SELECT email FROM accounts WHERE id = ?", (account_id,))["email"]
    return auth.mint(srv.core, email, scopes=("runs:read", "runs:write"))[0]


def test_a_forks_decisions_are_graded_from_its_own_tick(owner, original):
    from tests.waiting import until

    run = original["run"]
    launched = owner.post("/api/v1/runs", json={"fork": {"run_id": run["run_id"], "tick": 36},
                                                "grading": "all", "trials": 1}).json()["run"]
    wait_terminal(owner, launched["run_id"])

    def graded():
        body = owner.get(f"/api/v1/runs/{launched['run_id']}/decisions").json()
        return body if body["status"] == "done" else None
    body = until(graded, 300, what="the fork's grading")
    ticks = sorted({t["tick"] for t in body["turns"]})
    assert ticks and ticks[0] == 36 and ticks[-1] <= 39
    assert {t["seat"] for t in body["turns"]} == {0, 1}


def test_a_fork_forks_in_turn(srv, owner, original):
    run = original["run"]
    first = wait_terminal(owner, owner.post("/api/v1/runs", json={"fork": {
        "run_id": run["run_id"], "tick": 12, "seats": {"0": {"model": "local/random"}}}}).json()["run"]["run_id"])
    again = owner.post("/api/v1/runs", json={"fork": {"run_id": first["run"]["run_id"], "tick": 25}})
    assert again.status_code == 201, again.text
    second = wait_terminal(owner, again.json()["run"]["run_id"])
    assert second["run"]["status"] == "finished", second["run"]["error"]
    assert second["run"]["effective"]["fork"]["match_id"] == first["run"]["match_id"]
    mine, theirs = _events(srv, second["run"]["match_id"]), _events(srv, first["run"]["match_id"])
    before = int((theirs["tick"] < 25).sum())
    assert all(np.array_equal(mine[c][:before], theirs[c][:before]) for c in events.COLUMNS)
    assert [s["model"] for s in second["run"]["roster"]] == ["local/random", "local/honest-trader"]
