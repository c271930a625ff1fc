"""Text an agent or a model sends, against a real server playing on Ray (issue 38 F1, F6): what no run
can hold (a lone UTF-16 surrogate, from a JSON escape) is refused at the door on every agent surface,
naming the field; what it can hold plays, stays in the event log as said, and public pages show it
without control characters or bidirectional overrides. Then the served twin of the in-process
property test (tests/seats/test_text_properties.py): a few whole runs with generated text."""
from __future__ import annotations

import json
import secrets
import threading
import time

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from analytics.archive.store import Archive
from orchestrator import console_auth
from orchestrator.seats import keys
from orchestrator.accounts import create_account
from orchestrator.auth import SCOPES, mint
from tests.agents.conftest import world_body
from tests.runs.conftest import wait_terminal
from tests.seats.fake_provider import FakeProvider
from tests.seats.text_inputs import SEATS, bodies, no_hidden, turn

ABSENT_S = 5
TURN = "/api/v1/runs/{}/seats/0/turn"
ACTIONS = "/api/v1/runs/{}/seats/0/actions"
JSON = {"content-type": "application/json"}
HIDDEN = ("\x00", "\n", "\u202e", "\u2066")
SAID = "a\x00b\u202ec\u2066d\ne \U0001F600"


def _open_turn(c: httpx.Client, run_id: str) -> dict:
    while True:
        turn = c.get(TURN.format(run_id), params={"wait_ms": 5000}).json()
        assert turn["status"] != "ended", turn
        if turn["status"] == "your_turn":
            return turn


def _console(srv, lab: httpx.Client) -> tuple[httpx.Client, str]:
    """The account's person signed in to the console (a login link), and their session's CSRF token."""
    email = lab.get("/api/v1/me").json()["user"]["email"]
    c = httpx.Client(base_url=srv.url, timeout=30)
    assert c.get(console_auth.login_link(srv.core, email, srv.url), follow_redirects=False).status_code == 303
    return c, console_auth.session(srv.core, c.cookies["studio_console"]).csrf


def test_a_lone_surrogate_is_refused_on_every_agent_surface_and_said_text_is_hidden_on_public_pages(srv, lab):
    run = lab.post("/api/v1/runs", json=world_body(10)).json()["run"]
    rid = run["run_id"]
    tick = _open_turn(lab, rid)["tick"]
    # the JSON escapes literally, as the audit sent them: no run, store or response can hold the text
    lone = b'{"tick": %d, "actions": [{"action": "say", "text": "a\\ud800b"}]}' % tick
    r = lab.post(ACTIONS.format(rid), content=lone, headers=JSON)
    assert r.status_code == 400 and r.json()["error"] == "bad_actions", r.text
    assert r.json()["message"].startswith("actions[0].text: should be valid Unicode text")
    key = b'{"tick": %d, "actions": [{"action": "say", "text": "hi", "\\udc00": 1}]}' % tick
    r = lab.post(ACTIONS.format(rid), content=key, headers=JSON)
    assert r.status_code == 400 and r.json()["error"] == "bad_actions" and r.json()["message"].startswith("actions[0]:")
    console, csrf = _console(srv, lab)
    try:
        r = console.post(f"/console/runs/{rid}/seats/0/actions", content=lone, headers={**JSON, "x-csrf-token": csrf})
    finally:
        console.close()
    assert r.status_code == 400 and r.json()["error"] == "bad_actions", r.text
    # MCP's JSON-RPC reader refuses the escape before any tool (the official client cannot send it)
    rpc = (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "submit_seat_actions", '
           b'"arguments": {"run_id": "%s", "seat": 0, "tick": %d, "actions": [{"action": "say", "text": "\\ud800"}]}}}'
           % (rid.encode(), tick))
    r = lab.post("/mcp/studio", content=rpc, headers={**JSON, "accept": "application/json, text/event-stream"})
    assert r.status_code == 400 and r.json()["error"]["code"] == -32700, r.text
    # the turn is still open: nothing reached the match. Every turn now says what a run can hold.
    long = "y" * 60_000  # near the body limit (64 KiB); the engine keeps say_max_chars of it
    while True:
        turn = lab.get(TURN.format(rid), params={"wait_ms": 5000}).json()
        if turn["status"] == "ended":
            break
        if turn["status"] == "your_turn":
            r = lab.post(ACTIONS.format(rid), json={"tick": turn["tick"], "actions": [
                {"action": "say", "text": SAID}, {"action": "say", "text": long}]})
            assert r.status_code == 200, r.text
    body = wait_terminal(lab, rid)
    run = body["run"]
    assert run["status"] == "finished" and run["error"] is None and body["results"]["match_ticks"] == 10
    turns = lab.get(f"/api/v1/runs/{rid}/transcript", params={"seat": 0}).json()["turns"]
    assert len(turns) == run["roster"][0]["usage"]["agent_turns"] == 10
    assert all(json.loads(t["reply"])["actions"][0]["text"] == SAID for t in turns)  # the owner's record, as sent
    cols, _ = Archive.of(srv.data_dir, srv.core.config).read_events(run["match_id"])
    assert list(cols["text"]).count(SAID) == 10 and list(cols["text"]).count(long[:280]) == 10  # the log, as said
    with httpx.Client(base_url=srv.url, timeout=30) as anon:
        links = run["links"]
        pages = [anon.get(links["match"]), anon.get(links["match"], params={"format": "html"}), anon.get(links["log"]),
                 anon.get(links["replay"]), anon.get(links["replay"], params={"format": "json"})]
    assert all(p.status_code == 200 for p in pages)
    for p in pages:
        shown = p.text.replace("\n", "") if p.headers["content-type"].startswith("text/plain") else p.text
        assert not any(h in shown for h in HIDDEN if h != "\n"), p.url
    assert '"abcde \U0001F600"' in pages[2].text  # the play-by-play: what was said, hidden characters removed
    replay = pages[4].json()
    says = [e["text"] for e in replay["events"] if e["kind"] == "say"]
    assert says and all("\x00" not in s and "\u202e" not in s and "\n" not in s for s in says)


# -- the served twin of the property test --------------------------------------------------------------
SERVED_TICKS = 10  # the shortest season a run takes


@pytest.fixture(scope="module")
def fake():
    with FakeProvider() as server:
        yield server


def _play(c: httpx.Client, run_id: str, turns: list) -> None:
    """The agent over REST: each open turn answered with the generated actions (their JSON escapes, as a
    client writes them), and a chosen wait after a 400."""
    until = time.monotonic() + 120
    while time.monotonic() < until:
        turn_ = c.get(TURN.format(run_id), params={"wait_ms": 10000}).json()
        if turn_["status"] == "ended":
            return
        if turn_["status"] != "your_turn":
            continue
        sent = json.dumps({"tick": turn_["tick"], "actions": turns[turn_["tick"]][0]}).encode()
        r = c.post(ACTIONS.format(run_id), content=sent, headers=JSON)
        if r.status_code == 400:
            assert r.json()["error"] in ("bad_actions", "bad_request"), r.text
            r = c.post(ACTIONS.format(run_id), json={"tick": turn_["tick"], "actions": []})
        assert r.status_code == 200, r.text
    raise TimeoutError(f"run {run_id} did not end")


def _in_thread(fn, *args) -> tuple[threading.Thread, list]:
    errors = []

    def run():
        try:
            fn(*args)
        except BaseException as e:  # noqa: BLE001  (handed to the test's thread)
            errors.append(e)
    t = threading.Thread(target=run)
    t.start()
    return t, errors


# the audit's inputs, every time: lone surrogates from the agent and from both reply formats, NUL and an
# override, a 64 KiB text (tools calls carry their arguments as JSON text, escapes and all)
AUDIT = [([{"action": "say", "text": "a\ud800b"}], json.dumps({"actions": [{"action": "say", "text": "a\ud800b"}]}),
          ([("say", json.dumps({"text": "\udfff" + "z" * 65536}))], "")),
         ([{"action": "say", "text": "a\x00b\u202e"}], json.dumps({"actions": [{"action": "say", "text": SAID}]},
                                                                  ensure_ascii=False),
          ([("say", '{"text": "\\ud800"}')], ""))] * (SERVED_TICKS // 2)


@settings(max_examples=5, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])
@given(turns=st.lists(turn, min_size=SERVED_TICKS, max_size=SERVED_TICKS))
@example(turns=AUDIT)
def test_any_text_through_a_served_run(srv, fake, turns):
    email = f"text-{secrets.token_hex(6)}@example.com"
    create_account(srv.core, email, plan="lab", verified=True)
    keys.set_key(srv.core, provider="router", key="k-router", email=email, base_url=fake.url + "/v1")
    token, _ = mint(srv.core, email, scopes=SCOPES)
    roster = [dict(SEATS[0]), {**SEATS[1], "model": f"prop/json-{email}"}, {**SEATS[2], "model": f"prop/tools-{email}"}]
    json_answers, tools_answers = bodies(turns)
    fake.script(roster[1]["model"], *({"body": b} for b in json_answers))
    fake.script(roster[2]["model"], *({"body": b} for b in tools_answers))
    with httpx.Client(base_url=srv.url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as c:
        r = c.post("/api/v1/runs", json=world_body(SERVED_TICKS, roster=roster,
                                                   env={"turn_timeout_ms": 30000, "anchors": []}))
        assert r.status_code == 201, r.text
        rid = r.json()["run"]["run_id"]
        agent, errors = _in_thread(_play, c, rid, turns)
        body = wait_terminal(c, rid, timeout=120)
        agent.join(timeout=30)
        assert not errors, errors
        run = body["run"]
        assert run["status"] == "finished" and run["error"] is None, run["error"]
        assert [s["turns"]["answered"] for s in run["roster"][1:]] == [SERVED_TICKS] * 2, run["roster"]  # every reply read
        metered = sum(s["usage"]["agent_turns"] for s in run["roster"])
        got = c.get(f"/api/v1/runs/{rid}/transcript", params={"limit": 500})
        assert got.status_code == 200, got.text
        kept = got.json()["turns"]
        assert len(kept) == metered == len(SEATS) * SERVED_TICKS  # every metered turn
        links = run["links"]
        pages = [c.get(links["match"]), c.get(links["match"], params={"format": "html"}), c.get(links["log"]),
                 c.get(links["replay"]), c.get(links["replay"], params={"format": "json"})]
    assert [p.status_code for p in pages] == [200] * 5
    assert no_hidden(pages[2].text)
