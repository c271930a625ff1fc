"""Agent seats over REST (docs/AGENTS.md), against a real server playing on Ray: a season to
results, every refusal of the turn endpoints, an absent agent, one that goes away, a slow one, the
public pages, and Connect Four against the solver."""
from __future__ import annotations

import json
import secrets
import time

import httpx

from orchestrator import auth
from orchestrator.runs import service
from tests.agents.conftest import play_rest, world_body
from tests.runs.conftest import account, wait_terminal

# every agent here asks for its turn as soon as its run is launched: a short window (conftest's srv)
ABSENT_S = 5
TURN = "/api/v1/runs/{}/seats/{}/turn"
ACTIONS = "/api/v1/runs/{}/seats/{}/actions"


def _launch(c: httpx.Client, body: dict) -> dict:
    r = c.post("/api/v1/runs", json=body)
    assert r.status_code == 201, r.text
    return r.json()["run"]


def _open_turn(c: httpx.Client, run_id: str, seat: int = 0, timeout_s: float = 60) -> dict:
    until = time.monotonic() + timeout_s
    while time.monotonic() < until:
        turn = c.get(TURN.format(run_id, seat), params={"wait_ms": 5000}).json()
        assert turn["status"] != "ended", turn
        if turn["status"] == "your_turn":
            return turn
    raise AssertionError(f"no turn opened for run {run_id}")


def test_an_agent_seat_is_free_metered_and_refuses_model_settings(lab):
    est = lab.post("/api/v1/runs/estimate", json=world_body(20)).json()["batch"]
    assert est["seats"][0] == {"seat": 0, "name": "Agent", "model": "my-agent v0.1", "provider": "agent",
                               "funding": "free", "priced": "free"}
    assert est["usd"] == {"low": 0.0, "high": 0.0} and est["agent_turns"] == 2 * 20
    for extra, words in (({"model": "x" * 81}, "1 to 80"), ({"reasoning": "low"}, "reasoning"),
                         ({"temperature": 0.2}, "temperature"), ({"max_tokens": 100}, "max_tokens"),
                         ({"format": "json"}, "format")):
        seat = {"provider": "agent", "model": "a", **extra}
        r = lab.post("/api/v1/runs/estimate", json=world_body(roster=[seat]))
        assert r.status_code == 400 and r.json()["error"] == "bad_roster", (extra, r.text)
        assert "roster[0]" in r.json()["message"] and words in r.json()["message"]


def test_an_agent_plays_a_20_tick_season_over_rest_to_results(srv, lab, token):
    marker = f"private-{secrets.token_hex(6)}"
    body = world_body(20, roster=[{"provider": "agent", "model": "my-agent v0.1", "name": "Agent",
                                   "instructions": "Walk north and gather."}, {"model": "local/honest-trader"}])
    run = _launch(lab, body)
    assert run["roster"][0]["funding"] == "free" and run["roster"][0]["turns"]["answered"] == 0
    seen = []

    def policy(turn):
        seen.append(turn)
        # one readable action, and one the engine refuses: its text must stay with the owner
        return [{"action": "move", "direction": "north"}, {"action": "fly", "note": marker}]
    began = time.monotonic()
    play_rest(lab, run["run_id"], 0, policy)
    body = wait_terminal(lab, run["run_id"])
    assert time.monotonic() - began < 20 * 5  # a tick plays when every seat has acted, not at its deadline
    run, results = body["run"], body["results"]
    assert run["status"] == "finished" and results["match_ticks"] == 20
    assert [t["tick"] for t in seen] == list(range(20))
    first = seen[0]
    assert first["actions_per_turn"] == 2 and first["season_ticks"] == 20 and first["directions"] == "Walk north and gather."
    assert first["observation"]["text"].startswith("tick 0 of 20") and first["observation"]["state"]["tick"] == 0
    assert first["deadline_ms"] > time.time() * 1000 - 120_000
    assert seen[1]["observation"]["state"]["last_actions"][-1]["ok"] is False  # the refusal, in the next observation
    seat = run["roster"][0]
    assert seat["turns"] == {"answered": 20, "invalid": 20, "timed_out": 0, "provider_errors": 0, "retries": 0}
    assert seat["usage"] == {"agent_turns": 20, "input_tokens": 0, "output_tokens": 0, "usd": 0.0}
    assert results["agents"][0]["model"] == "my-agent v0.1" and results["agents"][0]["replied"] is True
    turns = lab.get(f"/api/v1/runs/{run['run_id']}/transcript", params={"seat": 0, "limit": 500}).json()["turns"]
    prefix = auth.authenticate(srv.core, token).token_prefix
    assert len(turns) == 20 and {t["submitted_by"] for t in turns} == {f"token:{prefix}"}
    assert json.loads(turns[3]["reply"]) == {"tick": 3, "actions": [{"action": "move", "direction": "north"},
                                                                     {"action": "fly", "note": marker}]}
    assert turns[3]["actions"] == [{"action": "move", "direction": "north"}] and "unknown_action" in turns[3]["refused"][0]
    with httpx.Client(base_url=srv.url, timeout=30) as anon:  # the public pages: no token, no submitted text
        links = run["links"]
        pages = [anon.get(links["match"]), anon.get(links["match"], params={"format": "html"}), anon.get(links["log"]),
                 anon.get(links["replay"]), anon.get(links["replay"], params={"format": "json"})]
    assert all(p.status_code == 200 for p in pages)
    assert not any(marker in p.text for p in pages)
    assert marker in json.dumps(turns)


def test_the_turn_endpoints_refuse_as_the_contract_says(srv, lab):
    run = _launch(lab, world_body(10))
    rid = run["run_id"]
    assert lab.get(TURN.format(rid, 0)).json()["status"] in ("waiting", "your_turn")  # wait_ms 0 answers at once

    def refused(r: httpx.Response, status: int, code: str) -> str:
        assert (r.status_code, r.json()["error"]) == (status, code), r.text
        return r.json()["message"]
    for seat in ("1", "7", "x", "-1"):  # a scripted seat, none at all, not a number
        refused(lab.get(TURN.format(rid, seat)), 400, "not_agent_seat")
        refused(lab.post(ACTIONS.format(rid, seat), json={"tick": 0, "actions": []}), 400, "not_agent_seat")
    for wait in ("30001", "-1", "soon"):
        refused(lab.get(TURN.format(rid, 0), params={"wait_ms": wait}), 400, "bad_request")
    refused(lab.get(TURN.format("run_nope", 0)), 404, "unknown_run")
    with srv.client(account(srv.core)) as foreign:  # another account's run reads as unknown
        refused(foreign.get(TURN.format(rid, 0)), 404, "unknown_run")
        refused(foreign.post(ACTIONS.format(rid, 0), json={"tick": 0, "actions": []}), 404, "unknown_run")
    with srv.client(account(srv.core, scopes=("runs:read",))) as reader:
        refused(reader.get(TURN.format(rid, 0)), 403, "scope_required")

    turn = _open_turn(lab, rid)
    assert turn["tick"] == 0
    post = lambda body: lab.post(ACTIONS.format(rid, 0), json=body)  # noqa: E731
    refused(post([]), 400, "bad_request")
    assert "tick" in refused(post({"actions": []}), 400, "bad_request")
    assert "actions" in refused(post({"tick": 0}), 400, "bad_request")
    refused(post({"tick": 0, "actions": [], "why": 1}), 400, "bad_request")
    refused(post({"tick": "0", "actions": []}), 400, "bad_request")
    refused(post({"tick": 0, "actions": {"action": "wait"}}), 400, "bad_actions")
    refused(post({"tick": 0, "actions": ["wait"]}), 400, "bad_actions")
    assert "at most 2" in refused(post({"tick": 0, "actions": [{"action": "wait"}] * 3}), 400, "bad_actions")
    assert "tick 0" in refused(post({"tick": 5, "actions": []}), 409, "turn_closed")  # says which tick is open
    assert post({"tick": 0, "actions": [{"action": "wait"}]}).json() == {"ok": True, "tick": 0, "received": 1}
    refused(post({"tick": 0, "actions": []}), 409, "turn_closed")  # answered once, closed
    play_rest(lab, rid, 0, lambda t: [])
    wait_terminal(lab, rid)
    ended = lab.get(TURN.format(rid, 0)).json()
    assert (ended["status"], ended["tick"], ended["observation"], ended["deadline_ms"]) == ("ended", 9, None, None)
    assert "ended" in refused(post({"tick": 9, "actions": []}), 409, "turn_closed")


def test_an_agent_that_never_asks_fails_the_run_with_agent_absent(lab):
    run = _launch(lab, world_body(10))
    body = wait_terminal(lab, run["run_id"], timeout=ABSENT_S + 60)
    assert body["run"]["status"] == "failed" and body["results"] is None
    error = body["run"]["error"]
    assert error["error"] == "agent_absent" and "roster[0]" in error["message"] and "never asked" in error["message"]


def test_an_agent_that_stops_asking_fails_the_run_after_three_missed_ticks(lab):
    run = _launch(lab, world_body(10))
    first = _open_turn(lab, run["run_id"])
    lab.post(ACTIONS.format(run["run_id"], 0), json={"tick": first["tick"], "actions": []})
    body = wait_terminal(lab, run["run_id"], timeout=90)  # then silence: ticks 1, 2 and 3 pass unanswered
    run = body["run"]
    assert run["status"] == "failed" and run["error"]["error"] == "agent_absent"
    assert "roster[0]" in run["error"]["message"] and "missed 3" in run["error"]["message"]
    assert run["roster"][0]["turns"]["timed_out"] == 3 and run["roster"][0]["turns"]["answered"] == 1


def test_a_slow_agent_misses_a_tick_and_the_season_goes_on(lab):
    run = _launch(lab, world_body(10))
    rid, late = run["run_id"], []

    def policy(turn):
        if turn["tick"] == 1 and not late:  # think past the deadline, then answer
            time.sleep(max(0.0, turn["deadline_ms"] / 1000 - time.time()) + 0.5)
            r = lab.post(ACTIONS.format(rid, 0), json={"tick": 1, "actions": [{"action": "wait"}]})
            late.append(r)
        return [{"action": "wait"}]
    until = time.monotonic() + 120
    while time.monotonic() < until:  # play_rest, tolerating the one turn_closed the late answer earns
        turn = lab.get(TURN.format(rid, 0), params={"wait_ms": 5000}).json()
        if turn["status"] == "ended":
            break
        if turn["status"] == "your_turn":
            lab.post(ACTIONS.format(rid, 0), json={"tick": turn["tick"], "actions": policy(turn)})
    assert late[0].status_code == 409 and late[0].json()["error"] == "turn_closed"
    body = wait_terminal(lab, rid)
    assert body["run"]["status"] == "finished" and body["results"]["match_ticks"] == 10
    assert body["run"]["roster"][0]["turns"]["timed_out"] == 1 and body["run"]["roster"][0]["turns"]["answered"] == 9
    turns = lab.get(f"/api/v1/runs/{rid}/transcript", params={"seat": 0}).json()["turns"]
    assert turns[1]["error"] == "no actions within the turn" and turns[1]["submitted_by"] is None


def test_an_agent_plays_connect_four_against_the_solver_over_rest(srv, lab, token):
    core = srv.app.state.core
    out = service.arena_launch(core, auth.authenticate(core, token), {
        "scenario_id": "arena:connect-four", "env": {"turn_timeout_ms": 20000},
        "roster": [{"provider": "agent", "model": "c4-agent"}, {"model": "local/solver"}]})
    rid, asked = out["run"]["run_id"], []

    def policy(turn):
        asked.append(turn)
        state = turn["observation"]["state"]
        if len(asked) == 1:
            return [{"column": 9}]  # illegal: asked again, the same tick, with the reason
        return [{"column": state["playable_columns"][0]}]
    play_rest(lab, rid, 0, policy)
    body = wait_terminal(lab, rid, timeout=120)
    run, results = body["run"], body["results"]
    assert run["status"] == "finished" and results["rubric"] == "arena-connect-four-1"
    assert asked[1]["tick"] == asked[0]["tick"] == 0 and "column number" in asked[1]["observation"]["state"]["refused"]
    assert asked[0]["observation"]["state"]["playable_columns"] == [1, 2, 3, 4, 5, 6, 7]
    assert len(asked[0]["observation"]["state"]["grid"]) == 6 and "Playable columns" in asked[0]["observation"]["text"]
    agent = results["agents"][0]
    assert agent["model"] == "c4-agent" and agent["status"] == "lost" and results["game"]["result"] == "0-1"
    assert run["roster"][0]["turns"]["answered"] == len(asked)
    turns = lab.get(f"/api/v1/runs/{rid}/transcript", params={"seat": 0}).json()["turns"]
    assert turns and all(t["submitted_by"].startswith("token:") for t in turns)
