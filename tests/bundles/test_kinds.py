"""Untouched bundles of every run kind verify in a fresh process (`studio verify`, no service, key or
network): scripted runs and series, model seats on the provider double, agent seats, forks, arena
games. Their REST answers: the zip and its name, 404 for ids unknown to the account, 409 before the end."""
from __future__ import annotations

import io
import json
import zipfile

import pytest

from tests.bundles.util import fetched, launched, verified_apart
from tests.runs.conftest import account, local_body, wait_terminal
from tests.runs.test_model_seats import model_account
from tests.seats.fake_provider import FakeProvider

GPT, CLAUDE = "openai/gpt-4o-mini", "claude-haiku-4-5"


@pytest.fixture
def fake():
    with FakeProvider() as server:
        yield server


def _manifest(data: bytes) -> dict:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return json.loads(z.read("manifest.json"))


def test_a_scripted_run_and_series_verify_apart(srv, tmp_path):
    with srv.client(account(srv.core)) as c:
        run = launched(c, local_body(season_ticks=40))["run"]
        series = launched(c, local_body(season_ticks=30, trials=3))["batch"]
        one, many = fetched(c, run["run_id"]), fetched(c, series["batch_id"])
        assert fetched(c, run["run_id"]) == one  # its bytes depend on its content alone
    manifest = _manifest(many)
    assert manifest["format"] == "studio-bundle-1" and len(manifest["matches"]) == 3
    m = manifest["matches"][0]
    assert {"run_id", "match_id", "scenario", "engine", "seeds", "roster", "rubric", "results",
            "log_sha256"} <= set(m)
    assert m["seeds"]["seed"]["source"] in ("drawn", "series", "given", "scenario", "paired")
    for data, n in ((one, 1), (many, 3)):
        status, report = verified_apart(tmp_path, data)
        assert (status, report["verified"], report["matches"]) == (0, True, n), report


def test_model_seats_on_the_provider_double_verify_apart(srv, fake, tmp_path):
    fake.defaults[GPT] = {"calls": [("move", {"direction": "north"}), ("gather", {})], "usage": (100, 20)}
    fake.defaults[CLAUDE] = {"text": '{"actions": [{"action": "eat"}, {"action": "dance"}]}', "usage": (80, 10)}
    c, _ = model_account(srv, fake)
    roster = [{"model": GPT, "name": "gpt"}, {"model": CLAUDE, "provider": "anthropic", "name": "claude",
                                              "format": "json"}, {"model": "local/greedy-harvester"}]
    with c:
        run = launched(c, {"scenario_id": "svc:custom-base-v1", "season_ticks": 10, "roster": roster})["run"]
        data = fetched(c, run["run_id"])
        fork = launched(c, {"fork": {"run_id": run["run_id"], "tick": 6,
                                     "seats": {"2": {"model": GPT, "name": "newcomer"}}}})["run"]
        forked = fetched(c, fork["run_id"])
    manifest = _manifest(data)
    assert manifest["matches"][0]["turns"]["count"] == 20
    status, report = verified_apart(tmp_path, data)
    assert (status, report["matches"]) == (0, 1), report
    manifest = _manifest(forked)
    assert [m["basis"] for m in manifest["matches"]] == [True, False]
    status, report = verified_apart(tmp_path, forked)
    assert (status, report["matches"]) == (0, 2), report


def test_refusals(srv, idle):
    with srv.client(account(srv.core)) as c:
        for path, code in (("/api/v1/runs/run_nope/bundle", "unknown_run"),
                           ("/api/v1/batches/bat_nope/bundle", "unknown_batch"),
                           ("/api/v1/batches/run_nope/bundle", "unknown_batch"),
                           ("/api/v1/runs/bat_nope/bundle", "unknown_run")):
            r = c.get(path)
            assert (r.status_code, r.json()["error"]) == (404, code)
    with idle.client(account(idle.core)) as c:
        run = c.post("/api/v1/runs", json=local_body()).json()["run"]
        r = c.get(f"/api/v1/runs/{run['run_id']}/bundle")
        assert (r.status_code, r.json()["error"]) == (409, "run_not_ended")


def test_agent_seats_verify_apart(srv, tmp_path):
    from tests.agents.conftest import play_rest, world_body

    with srv.client(account(srv.core)) as c:
        run = c.post("/api/v1/runs", json=world_body(10)).json()["run"]
        moves = iter(["north", "east", "south", "west"] * 4)
        play_rest(c, run["run_id"], 0, lambda turn: [{"action": "move", "direction": next(moves)},
                                                     {"action": "juggle"}])
        assert wait_terminal(c, run["run_id"])["run"]["status"] == "finished"
        data = fetched(c, run["run_id"])
    manifest = _manifest(data)
    assert manifest["matches"][0]["turns"]["count"] == 10
    status, report = verified_apart(tmp_path, data)
    assert (status, report["matches"]) == (0, 1), report


def test_arena_games_verify_apart(srv, fake, tmp_path):
    from orchestrator import auth
    from orchestrator.runs import service

    core = srv.app.state.core
    fake.defaults["test/column4"] = {"text": '{"move": "4"}', "usage": (30, 3)}  # a full column: re-asked, then forfeit
    c, _ = model_account(srv, fake)
    token = c.headers["authorization"].split()[1]
    principal = auth.authenticate(core, token)
    ids = [service.arena_launch(core, principal, body)["run"]["run_id"] for body in (
        {"scenario_id": "arena:connect-four", "roster": [{"model": "local/solver"}, {"model": "local/random"}]},
        {"scenario_id": "arena:connect-four", "env": {"turn_timeout_ms": 5000},
         "roster": [{"model": "test/column4", "name": "m", "format": "json"}, {"model": "local/random"}]})]
    with c:
        for run_id in ids:
            assert wait_terminal(c, run_id, timeout=120)["run"]["status"] == "finished"
            data = fetched(c, run_id)
            status, report = verified_apart(tmp_path, data)
            assert (status, report["matches"]) == (0, 1), report
