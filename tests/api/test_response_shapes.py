"""Every operation of the served OpenAPI document, driven with valid input on a server that plays runs,
answers exactly what the document declares for its status and media type. The response models are
closed (additionalProperties false), so a field the core adds without its model fails here."""
from __future__ import annotations


import pytest

from orchestrator import auth
from orchestrator.seats import keys
from orchestrator.accounts import create_account
from orchestrator.runs import service
from tests.waiting import until
from tests.api.openapi_check import Checker
from tests.runs.conftest import TERMINAL, wait_terminal
from tests.seats.fake_provider import FakeProvider

WORLD = "svc:custom-base-v1"
SCRIPTED = [{"model": "local/honest-trader"}, {"model": "local/aggressive-raider"}]


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def srv(request):
    """The played server on either store: every operation answers alike on both."""
    return request.getfixturevalue("shared_srv" if request.param == "sqlite" else "shared_srv_pg")


@pytest.fixture(scope="module")
def fake():
    with FakeProvider() as server:
        server.defaults["openai/gpt-4o-mini"] = {"calls": [("move", {"direction": "north"}), ("gather", {})],
                                                "usage": (120, 30)}
        yield server


def _token(srv, fake) -> str:
    email = "shapes@example.com"
    create_account(srv.core, email, plan="lab", verified=True)
    keys.set_key(srv.core, provider="router", key="k-router", email=email, base_url=fake.url + "/v1")
    token, _ = auth.mint(srv.core, email, scopes=auth.SCOPES)
    return token


def _ended(c, run_id: str) -> dict:
    body = wait_terminal(c, run_id, timeout=120)
    assert body["run"]["status"] in TERMINAL
    return body


def test_every_operation_answers_as_the_document_declares(srv, fake):
    token = _token(srv, fake)
    with srv.client(token) as c:
        doc = c.get("/api/v1/openapi.json").json()
        k = Checker(doc, c)
        k.call("get", "/api/v1", expect=200)
        k.call("get", "/api/v1/me", expect=200)
        k.call("get", "/api/v1/scenarios/schema", expect=200)
        k.call("get", "/api/v1/library/scenarios", expect=200)
        k.call("get", "/api/v1/library/anchors", expect=200)

        # scenarios: validate (with both warnings), create, the idempotent create, read, list, update, delete
        k.call("post", "/api/v1/scenarios/validate", json={"name": "Pinned", "season_ticks": 2000, "env": {
            "seed": 1, "spawn_seed": 2}}, expect=200)
        definition = {"name": "Shapes", "season_ticks": 20, "env": {"anchors": []}}
        created = k.call("post", "/api/v1/scenarios", json=definition, expect=201).json()["scenario"]
        k.call("post", "/api/v1/scenarios", json=definition, expect=200)
        sid = {"id": created["id"]}
        k.call("get", "/api/v1/scenarios", expect=200)
        k.call("get", "/api/v1/scenarios/{id}", path=sid, expect=200)
        k.call("put", "/api/v1/scenarios/{id}", path=sid, json={"description": "closed shapes"}, expect=200)

        # skills: built-in and own
        k.call("get", "/api/v1/skills", expect=200)
        own = k.call("post", "/api/v1/skills", json={"name": "Hoarder", "text": "Keep every relic you find."},
                     expect=201).json()["skill"]
        k.call("get", "/api/v1/skills/{id}", path={"id": "builtin:trader"}, expect=200)
        k.call("get", "/api/v1/skills/{id}", path={"id": own["id"]}, expect=200)
        k.call("put", "/api/v1/skills/{id}", path={"id": own["id"]}, json={"text": "Sell every relic at once."},
               expect=200)

        # runs: a model seat beside a local seat that was sent directions it cannot read, a scripted
        # series and a series paired with it, an arena game (launched as the console does)
        model_run = {"scenario_id": WORLD, "season_ticks": 10, "env": {"anchors": ["honest-trader"]}, "roster": [
            {"model": "openai/gpt-4o-mini", "name": "gpt", "skills": ["builtin:trader", own["id"]],
             "instructions": "Greet agent two first.", "temperature": 0.5},
            {"model": "local/greedy-harvester", "instructions": "Explore."}]}
        k.call("post", "/api/v1/runs/estimate", json=model_run, expect=200)
        k.call("post", "/api/v1/runs/estimate", json={"scenario_id": WORLD, "roster": SCRIPTED, "trials": 3},
               expect=200)
        launched = k.call("post", "/api/v1/runs", json=model_run, expect=201).json()["run"]
        k.call("get", "/api/v1/runs/{id}", path={"id": launched["run_id"]}, expect=200)  # as queued or playing
        series = {"scenario_id": created["id"], "roster": SCRIPTED, "trials": 2}
        a = k.call("post", "/api/v1/runs", json=series, expect=201).json()["batch"]
        b = c.post("/api/v1/runs", json={**series, "paired_with": a["batch_id"]}).json()["batch"]
        core = srv.app.state.core
        arena = service.arena_launch(core, auth.authenticate(core, token), {
            "scenario_id": "arena:connect-four", "roster": [{"model": "local/solver"}, {"model": "local/random"}]})

        k.call("get", "/api/matches/{id}/live", path={"id": _match_of(c, launched["run_id"])}, expect=200)
        # an agent seat played through its two turn endpoints (docs/AGENTS.md)
        agent = c.post("/api/v1/runs", json={"scenario_id": WORLD, "season_ticks": 10, "roster": [
            {"provider": "agent", "model": "shapes-agent"}, {"model": "local/random"}]}).json()["run"]
        seat = {"id": agent["run_id"], "seat": 0}
        while (turn := k.call("get", "/api/v1/runs/{id}/seats/{seat}/turn", path=seat, params={"wait_ms": 5000},
                              expect=200).json())["status"] != "ended":
            if turn["status"] == "your_turn":
                k.call("post", "/api/v1/runs/{id}/seats/{seat}/actions", path=seat,
                       json={"tick": turn["tick"], "actions": [{"action": "gather"}]}, expect=200)
        runs = [launched["run_id"], arena["run"]["run_id"], *a["run_ids"], *b["run_ids"]]
        ended = {rid: _ended(c, rid) for rid in runs}
        model, game = ended[launched["run_id"]]["run"], ended[arena["run"]["run_id"]]["run"]
        for rid in runs:
            k.call("get", "/api/v1/runs/{id}", path={"id": rid}, expect=200)
        k.call("get", "/api/v1/runs", params={"limit": 2}, expect=200)
        k.call("get", "/api/v1/runs/{id}/transcript", path={"id": model["run_id"]}, params={"limit": 3}, expect=200)
        until(lambda: c.get(f"/api/v1/runs/{model['run_id']}").json()["run"]["grading"]["status"] == "done", 300,
              what="the model seat's grading")  # its decisions, and the results that carry them
        k.call("get", "/api/v1/runs/{id}/decisions", path={"id": model["run_id"]}, params={"limit": 3}, expect=200)
        k.call("get", "/api/v1/runs/{id}", path={"id": model["run_id"]}, expect=200)
        k.call("post", "/api/v1/runs/{id}/cancel", path={"id": model["run_id"]}, expect=200)
        k.call("get", "/api/v1/batches/{id}", path={"id": a["batch_id"]}, expect=200)
        k.call("get", "/api/v1/usage", expect=200)
        k.call("get", "/api/v1/leaderboard", params={"scenario_id": created["id"], "resamples": 100}, expect=200)
        k.call("get", "/api/v1/compare", params={"batch_a": a["batch_id"], "batch_b": b["batch_id"]}, expect=200)
        for fmt in ("csv", "parquet", "inspect"):
            k.call("get", "/api/v1/batches/{id}/export", path={"id": a["batch_id"]}, params={"format": fmt},
                   expect=200)
            k.call("get", "/api/v1/runs/{id}/export", path={"id": model["run_id"]}, params={"format": fmt},
                   expect=200)
        # result bundles: a run's (the model run was cancelled above: ended), a series', a match's
        k.call("get", "/api/v1/runs/{id}/bundle", path={"id": model["run_id"]}, expect=200)
        k.call("get", "/api/v1/batches/{id}/bundle", path={"id": a["batch_id"]}, expect=200)
        k.call("get", "/api/v1/matches/{id}/bundle", path={"id": game["match_id"]}, expect=200)

        # the public pages of a world match and of an arena game, in each media type
        for run in (model, game):
            mid = {"id": run["match_id"]}
            k.call("get", "/api/matches/{id}/report", path=mid, expect=200)
            k.call("get", "/api/matches/{id}/report", path=mid, params={"format": "html"}, expect=200)
            k.call("get", "/api/matches/{id}/log", path=mid, expect=200)
            k.call("get", "/api/matches/{id}/log", path=mid, params={"format": "html"}, expect=200)
            k.call("get", "/api/matches/{id}/replay", path=mid, expect=200)
            k.call("get", "/api/matches/{id}/replay", path=mid, params={"format": "json"}, expect=200)
            k.call("get", "/api/matches/{id}/live", path=mid, expect=200)
            # a world match and a Connect Four game have no PGN (tests/agents/test_pgn.py reads a chess one)
            k.call("get", "/api/matches/{id}/pgn", path=mid, expect=404)
            for page in ("report", "replay"):  # the API's envelope, not a page in a default format
                k.call("get", f"/api/matches/{{id}}/{page}", path=mid, params={"format": "pdf"}, expect=400)

        k.call("delete", "/api/v1/skills/{id}", path={"id": own["id"]}, expect=200)
        k.call("delete", "/api/v1/scenarios/{id}", path=sid, expect=200)
    assert not k.errors, "\n".join(k.errors)
    assert k.operations() - k.seen == set(), "operations no test drove"


def _match_of(c, run_id: str) -> str:
    """The run's match id, as soon as it has one (a live stream is watched while the match plays)."""
    return until(lambda: c.get(f"/api/v1/runs/{run_id}").json()["run"]["match_id"], 60, every=0.02,
                 what=f"run {run_id} getting a match")
