"""`until` on every kind of seat and on a fork's paired effect (docs/FORKS.md, docs/RUNS.md), over
REST on real servers: trials leave the queue in waves (orchestrator.runs.series.waves), so a target
reached early leaves the rest unplayed and unmetered, and a fork's twins go and stop together."""
from __future__ import annotations

import pytest

from analytics import sequence
from api.series_schemas import BatchOne
from tests.runs.conftest import account, local_body, wait_terminal
from tests.runs.test_model_seats import model_account
from tests.runs.test_until import _ended, _runs
from tests.seats.fake_provider import FakeProvider

LOOSE = {"half_width": 1e308}  # met by the first two scored trials: whatever is played beyond them overshoots


def test_a_model_series_plays_only_the_trials_its_target_needed(srv):
    with FakeProvider() as fake:
        fake.defaults["openai/gpt-4o"] = {"calls": [("wait", {})], "usage": (2000, 50)}
        c, _ = model_account(srv, fake)
        with c:
            body = {"scenario_id": "svc:custom-base-v1", "season_ticks": 10, "trials": 12, "until": LOOSE,
                    "env": {"anchors": []}, "roster": [{"model": "openai/gpt-4o"}, {"model": "local/random"}]}
            est = c.post("/api/v1/runs/estimate", json=body).json()["batch"]
            plain = c.post("/api/v1/runs/estimate", json={k: v for k, v in body.items() if k != "until"}).json()["batch"]
            launched = c.post("/api/v1/runs", json=body).json()
            batch = _ended(c, launched["batch"]["batch_id"], timeout=180)
            runs = [wait_terminal(c, r)["run"] for r in batch["run_ids"]]
            usage = c.get("/api/v1/usage").json()
        asked = fake.bodies("openai/gpt-4o", "/v1/chat/completions")
    played = [r for r in runs if r["stop_reason"] != "series_stopped"]
    unplayed = [r for r in runs if r["stop_reason"] == "series_stopped"]
    assert est["precision"]["expected_trials"] == 2 == len(played)  # the first wave: what the estimate said
    assert est["usd"]["low"] == pytest.approx(plain["usd"]["low"] / 12 * 2, abs=1e-4)
    assert batch["stopped"] == "precise" and len(unplayed) == 10
    assert all(r["status"] == "finished" for r in played)
    assert all(r["status"] == "cancelled" and r["match_id"] is None and r["spend"]["usd"] == 0
               and r["agent_turns"]["settled"] == 0 for r in unplayed)
    # the provider saw the two played trials' turns (a retry under load aside) and nothing of the ten others
    assert sum(r["roster"][0]["usage"]["agent_turns"] for r in played) == 2 * 10 <= len(asked) < 3 * 10
    assert batch["spent_usd"] == pytest.approx(sum(r["spend"]["usd"] for r in played)) and batch["spent_usd"] > 0
    assert usage["allowances"]["agent_turns"]["held"] == 0


@pytest.fixture(scope="module")
def owner(srv):
    with srv.client(account(srv.core)) as c:
        yield c


@pytest.fixture(scope="module")
def original(owner):
    body = local_body(season_ticks=30, roster=[{"model": "local/greedy-harvester"}, {"model": "local/honest-trader"}],
                      env={"seed": 5, "spawn_seed": 6})
    return wait_terminal(owner, owner.post("/api/v1/runs", json=body).json()["run"]["run_id"], timeout=300)["run"]


def test_a_fork_with_control_stops_on_its_effect_in_whole_pairs(owner, original):
    body = {"fork": {"run_id": original["run_id"], "tick": 10, "seats": {"0": {"model": "local/random"}},
                     "control": True}, "trials": 10, "until": LOOSE}
    est = owner.post("/api/v1/runs/estimate", json=body).json()["batch"]
    launched = owner.post("/api/v1/runs", json=body).json()["batch"]
    batch = _ended(owner, launched["batch_id"], timeout=300)
    runs = _runs(owner, batch)
    pairs: dict[int, dict] = {}
    for r in runs:
        fork = r["effective"]["fork"]
        pairs.setdefault(fork["continuation_seed"], {})[fork["arm"]] = r
    assert len(pairs) == 10 and all(set(p) == {"fork", "control"} for p in pairs.values())
    played = [p for p in pairs.values() if p["fork"]["status"] == "finished"]
    for p in pairs.values():  # twins end alike: both played, or both left unplayed
        assert p["fork"]["status"] == p["control"]["status"]
        assert p["fork"]["stop_reason"] == p["control"]["stop_reason"]
    assert len(played) == est["precision"]["expected_trials"] == 2
    assert batch["stopped"] == "precise" and batch["counts"] == {"finished": 4, "cancelled": 16}
    assert all(r["stop_reason"] == "series_stopped" and r["match_id"] is None for p in pairs.values()
               if p not in played for r in p.values())
    assert {e["n"] for e in batch["effect"]} == {2}  # every effect counts the played pairs
    fit = next(e for e in batch["effect"] if e["metric"] == "fitness_index")
    # the sequence of a difference, on -100..100: two pairs leave it wider than the 0..100 scale allows
    assert fit["cs"]["method"] == sequence.METHOD and -100 <= fit["cs"]["low"] < fit["cs"]["high"] <= 100
    assert fit["cs"]["half_width"] > 50
    assert all("cs" not in e for e in batch["effect"] if e["metric"] != "fitness_index")
    BatchOne.model_validate({"batch": batch})

