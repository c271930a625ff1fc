"""Series that stop when precise enough, within a budget (docs/RUNS.md), over REST on real
servers: scripted seats for the target, the provider double with a price for the budget."""
from __future__ import annotations

import pytest
from studio_client import StudioError

from analytics import sequence
from api.python import Studio
from api.estimate_schemas import Estimate
from api.run_schemas import Run
from api.series_schemas import BatchOne
from orchestrator.runs.series import waves
from tests.mcp.conftest import call, connect, ok
from tests.runs.conftest import account, local_body, wait_terminal
from tests.runs.test_model_seats import model_account
from tests.seats.fake_provider import FakeProvider
from tests.waiting import until

SEATS = [{"model": "local/honest-trader"}, {"model": "local/greedy-harvester"}]


def _ended(c, batch_id: str, timeout: float = 120) -> dict:
    def done():
        b = c.get(f"/api/v1/batches/{batch_id}", params={"wait_ms": 5000}).json()["batch"]
        return b if b["stopped"] is not None else None
    return until(done, timeout, what=f"the end of series {batch_id}")


def _runs(c, batch: dict) -> list[dict]:
    return [c.get(f"/api/v1/runs/{r}").json()["run"] for r in batch["run_ids"]]


BAD = [
    ("bad_until", {"trials": 5, "until": 3}),
    ("bad_until", {"trials": 5, "until": []}),
    ("bad_until", {"trials": 5, "until": {}}),
    ("bad_until", {"trials": 5, "until": {"half_width": 0}}),
    ("bad_until", {"trials": 5, "until": {"half_width": -2}}),
    ("bad_until", {"trials": 5, "until": {"half_width": "3"}}),
    ("bad_until", {"trials": 5, "until": {"half_width": True}}),
    ("bad_until", {"trials": 5, "until": {"half_width": 3, "metric": "crafter_score"}}),
    ("bad_until", {"trials": 5, "until": {"half_width": 3, "seat": 2}}),
    ("bad_until", {"trials": 5, "until": {"half_width": 3, "seat": -1}}),
    ("bad_until", {"trials": 5, "until": {"half_width": 3, "seat": "0"}}),
    ("bad_until", {"trials": 5, "until": {"half_width": 3, "seat": 1.5}}),
    ("bad_until", {"until": {"half_width": 3}}),
    ("bad_until", {"trials": 1, "until": {"half_width": 3}}),
    ("bad_spend_cap", {"trials": 5, "budget_usd": "20"}),
    ("bad_spend_cap", {"trials": 5, "budget_usd": None}),
    ("bad_request", {"budget_usd": 20}),
]


@pytest.mark.parametrize("code,over", BAD, ids=[f"{c}-{i}" for i, (c, _) in enumerate(BAD)])
def test_refusals_on_estimate_and_launch(idle, code, over):
    with idle.client(account(idle.core)) as c:
        body = local_body(roster=SEATS, **over)
        e, l_ = c.post("/api/v1/runs/estimate", json=body), c.post("/api/v1/runs", json=body)
    assert e.status_code == l_.status_code == 400 and e.json() == l_.json()
    assert e.json()["error"] == code
    if code == "bad_request":
        assert "max_spend_usd" in e.json()["message"]


def test_estimate_says_how_many_trials_a_target_needs(idle):
    with idle.client(account(idle.core)) as c:
        plain = c.post("/api/v1/runs/estimate", json=local_body(roster=SEATS, trials=40)).json()["batch"]
        loose = c.post("/api/v1/runs/estimate", json=local_body(
            roster=SEATS, trials=40, until={"half_width": 20})).json()["batch"]
        tight = c.post("/api/v1/runs/estimate", json=local_body(
            roster=SEATS, trials=40, until={"half_width": 8, "metric": "economy", "seat": 1})).json()["batch"]
    assert "expected_trials" not in plain["precision"]
    Estimate.model_validate({"ok": True, "batch": tight})
    # what the wave rule plays on the reference population (orchestrator.runs.series.waves)
    assert loose["precision"]["expected_trials"] == waves.expected_trials(20, 40, 10.0, 0, 100)
    assert 2 <= loose["precision"]["expected_trials"] < tight["precision"]["expected_trials"] <= 40
    assert loose["trials"] == 40 and loose["agent_turns"] == plain["agent_turns"]  # the ceiling is reserved


def test_estimate_prices_the_expected_trials_and_the_budget(idle):
    with FakeProvider() as fake:
        c, _ = model_account(idle, fake)
        with c:
            body = {"scenario_id": "svc:custom-base-v1", "season_ticks": 20, "trials": 30,
                    "roster": [{"model": "openai/gpt-4o"}]}
            plain = c.post("/api/v1/runs/estimate", json=body).json()["batch"]
            both = c.post("/api/v1/runs/estimate", json={**body, "until": {"half_width": 15},
                                                         "budget_usd": 0.5}).json()["batch"]
            clamped = c.post("/api/v1/runs/estimate", json={**body, "budget_usd": 10 ** 9}).json()["batch"]
    k = both["precision"]["expected_trials"]
    assert both["usd"]["high"] == 0.5 < plain["usd"]["high"]
    assert both["usd"]["low"] == pytest.approx(min(plain["usd"]["low"] / 30 * k, 0.5), abs=1e-4)
    assert clamped["usd"] == plain["usd"]  # a budget above the plan's range is clamped to its top


def test_a_series_stops_once_every_seat_is_precise(srv):
    with srv.client(account(srv.core)) as c:
        launched = c.post("/api/v1/runs", json=local_body(
            roster=SEATS, season_ticks=20, trials=30, until={"half_width": 30})).json()
        batch = _ended(c, launched["batch"]["batch_id"])
        runs = _runs(c, batch)
        usage = c.get("/api/v1/usage").json()
    assert batch["stopped"] == "precise" and batch["until"] == {"half_width": 30, "metric": "fitness_index", "seat": None}
    assert batch["budget_usd"] is None and batch["spent_usd"] == 0 and batch["status"] == "finished"
    assert batch["run_ids"] == launched["batch"]["run_ids"] and len(runs) == 30
    played = [r for r in runs if r["stop_reason"] != "series_stopped"]
    unplayed = [r for r in runs if r["stop_reason"] == "series_stopped"]
    assert unplayed and all(r["status"] == "cancelled" and r["match_id"] is None and r["spend"]["usd"] == 0
                            and r["agent_turns"]["settled"] == 0 for r in unplayed)
    assert all(r["status"] == "finished" for r in played) and len(played) >= 2
    assert usage["allowances"]["agent_turns"]["held"] == 0  # the unplayed trials' reservation is released
    seats = {s["seat"]: s for s in batch["summary"]["seats"]}
    assert seats[0]["n"] == len(played)  # the trials playing at the stop finished and count
    for k in (0, 1):
        cs = seats[k]["cs"]
        assert cs["method"] == sequence.METHOD and cs["half_width"] <= 30
        assert cs["low"] <= seats[k]["fitness_index"]["estimate"] <= cs["high"]
    assert all("cs" in s for s in batch["summary"]["seats"])  # anchors' entries carry theirs too
    BatchOne.model_validate({"batch": batch})  # the documented response shapes hold
    for r in unplayed:
        Run.model_validate(r)


def test_a_series_without_a_target_plays_its_ceiling(srv):
    with srv.client(account(srv.core)) as c:
        plain = c.post("/api/v1/runs", json=local_body(roster=SEATS, season_ticks=10, trials=3)).json()
        tight = c.post("/api/v1/runs", json=local_body(roster=SEATS, season_ticks=10, trials=3,
                                                       until={"half_width": 0.5, "seat": 0})).json()
        a, b = _ended(c, plain["batch"]["batch_id"]), _ended(c, tight["batch"]["batch_id"])
    assert a["stopped"] == b["stopped"] == "ceiling" and a["until"] is None and a["counts"] == {"finished": 3}
    assert b["counts"] == {"finished": 3} and b["until"]["seat"] == 0
    assert all("cs" not in s for s in a["summary"]["seats"]) and all("cs" in s for s in b["summary"]["seats"])


def test_cancelling_what_is_left_stops_it_cancelled(srv):
    with srv.client(account(srv.core)) as c:
        launched = c.post("/api/v1/runs", json=local_body(roster=SEATS, season_ticks=2000, trials=8,
                                                          until={"half_width": 0.5})).json()
        left = launched["batch"]["run_ids"][4:]  # two workers play two each; these wait in the queue
        cancelled = [c.post(f"/api/v1/runs/{r}/cancel").json()["cancelled"] for r in reversed(left)]
        batch = _ended(c, launched["batch"]["batch_id"], timeout=300)
    assert any(cancelled) and batch["stopped"] == "cancelled"


def test_a_budget_lowers_each_trials_cap_and_stops_the_series(srv):
    with FakeProvider() as fake:
        fake.defaults["openai/gpt-4o"] = {"calls": [("wait", {})], "usage": (20000, 100)}  # ~$0.051 a turn
        c, _ = model_account(srv, fake)
        with c:
            launched = c.post("/api/v1/runs", json={
                "scenario_id": "svc:custom-base-v1", "season_ticks": 10, "trials": 4, "budget_usd": 1.2,
                "env": {"anchors": []}, "roster": [{"model": "openai/gpt-4o"}]}).json()
            batch = _ended(c, launched["batch"]["batch_id"], timeout=180)
            runs = [wait_terminal(c, r)["run"] for r in batch["run_ids"]]
    turn = runs[0]["spend"]["usd"] / 10
    assert runs[0]["stop_reason"] == runs[1]["stop_reason"] == "season_end"
    assert runs[0]["spend"]["cap_usd"] == 1.2 and runs[1]["spend"]["cap_usd"] == pytest.approx(1.2 - 10 * turn)
    # the third gets what is left, and stops at the tick at which the series reaches the budget
    assert runs[2]["stop_reason"] == "spend_cap" and runs[2]["spend"]["cap_usd"] == pytest.approx(1.2 - 20 * turn)
    assert runs[3]["status"] == "cancelled" and runs[3]["stop_reason"] == "series_stopped"
    assert runs[3]["spend"]["usd"] == 0 and runs[3]["match_id"] is None
    assert batch["stopped"] == "budget" and batch["budget_usd"] == 1.2
    assert batch["spent_usd"] == pytest.approx(sum(r["spend"]["usd"] for r in runs))
    assert 1.2 <= batch["spent_usd"] <= 1.2 + turn + 1e-9  # at most one tick over, one trial playing


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
async def test_mcp_takes_until_and_budget_and_shows_the_stop(srv):
    token = account(srv.core)
    args = local_body(roster=SEATS, season_ticks=20, trials=30, until={"half_width": 30}, budget_usd=5)
    async with connect(srv, token) as client:
        est = (await ok(client, "estimate_run", args))["batch"]
        batch_id = (await ok(client, "launch_run", args))["batch"]["batch_id"]
        batch = None
        while batch is None or batch["stopped"] is None:
            batch = (await ok(client, "get_batch", {"id": batch_id, "wait_ms": 5000}))["batch"]
        refused = await call(client, "launch_run", {**args, "until": {"half_width": 3, "metric": "luck"}})
    assert 2 <= est["precision"]["expected_trials"] <= 30 and est["usd"] == {"low": 0.0, "high": 0.0}
    assert batch["stopped"] == "precise" and batch["budget_usd"] == 5 and batch["until"]["half_width"] == 30
    assert all(s["cs"]["half_width"] <= 30 for s in batch["summary"]["seats"] if not s["anchor"])
    assert refused[0] and refused[1]["error"] == "bad_until"


def test_python_takes_until_and_budget(srv):
    with Studio.connect(srv.url, token=account(srv.core)) as studio:
        out = studio.launch_run(**local_body(roster=SEATS, season_ticks=20, trials=30), until={"half_width": 30},
                                budget_usd=2.5)["batch"]
        batch = studio.wait(out["batch_id"], timeout_s=120)["batch"]
        with pytest.raises(StudioError) as bad:
            studio.estimate_run(**local_body(roster=SEATS), until={"half_width": 3})
    assert batch["stopped"] == "precise" and batch["budget_usd"] == 2.5 and batch["counts"]["cancelled"] > 0
    assert bad.value.code == "bad_until"
