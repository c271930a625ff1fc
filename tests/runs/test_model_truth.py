"""Model runs that tell the truth: failures seen, spend kept, replies readable.

Real uvicorn, real Ray workers, a real fake provider on 127.0.0.1 (tests/seats/fake_provider.py).
"""
import json
import os
import signal
import time

import pytest
import ray

from orchestrator.seats import keys
from orchestrator.accounts import create_account
from orchestrator.auth import SCOPES, mint
from orchestrator.runs.head.dispatcher import Dispatcher
from orchestrator.runs.head.recorder import record
from tests.api.util import free_port
from tests.runs.conftest import start, wait_terminal
from tests.seats.fake_provider import FakeProvider
from tests.waiting import until

_n = iter(range(10**6))
FAST = {"turn_timeout_ms": 5000, "anchors": []}


@pytest.fixture
def fake():
    with FakeProvider() as server:
        yield server


def self_hosted(srv, base_url: str, price: tuple | None = None):
    """An account holding an openai-compatible key (a self-hosted server), optionally priced."""
    email = f"truth{next(_n)}@example.com"
    create_account(srv.core, email, plan="lab", verified=True)
    keys.set_key(srv.core, provider="openai-compatible", key="k-local", email=email, base_url=base_url,
                 usd_per_mtok_in=price[0] if price else None, usd_per_mtok_out=price[1] if price else None)
    keys.set_key(srv.core, provider="router", key="k-router", email=email, base_url=base_url)
    token, _ = mint(srv.core, email, scopes=SCOPES)
    return srv.client(token)


def launch(c, ticks: int, seats: list[dict], **env) -> str:
    r = c.post("/api/v1/runs", json={"scenario_id": "svc:custom-base-v1", "season_ticks": ticks, "roster": seats,
                                     "env": dict(FAST, **env)})
    assert r.status_code == 201, r.text
    return r.json()["run"]["run_id"]


def wait_for(pred, timeout: float = 90):
    return until(pred, timeout)


# the refusal the engine logs quotes a reply's first 80 characters; the whole reply is the owner's only
GARBAGE = "Let me think about this carefully, weighing every option on the map before I act. PLAN-TAIL"
SEAT = {"model": "qwen2.5-7b", "provider": "openai-compatible", "name": "qwen"}


def test_a_dead_provider_fails_the_run_within_three_ticks(srv):
    dead = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    with self_hosted(srv, dead) as c:
        rid = launch(c, 300, [SEAT, {"model": "local/random"}])
        body = wait_terminal(c, rid, timeout=60)
    run = body["run"]
    assert run["status"] == "failed" and run["stop_reason"] == "failed"
    assert run["error"]["error"] == "provider_unreachable"
    message = run["error"]["message"]
    assert "roster[0]" in message and "openai-compatible" in message and "ConnectError" in message
    seat = run["roster"][0]
    assert seat["turns"]["provider_errors"] == 3 and seat["turns"]["answered"] == 0
    assert seat["turns"]["retries"] > 0 and seat["replied"] is False
    # what played (two ticks of waits) is archived and metered
    assert body["results"]["match_ticks"] == 2 and run["agent_turns"]["settled"] == 2 * 2
    card = body["results"]["agents"][0]
    assert card["replied"] is False and card["epilogue"].startswith("No replies")
    assert body["results"]["agents"][1]["replied"] is True
    assert seat["usage"]["usd"] == 0 and run["roster"][1].get("turns") is None


def test_garbage_replies_show_in_the_transcript_and_the_counts(srv, fake):
    fake.defaults["qwen2.5-7b"] = {"text": GARBAGE, "usage": (50, 12)}
    fake.defaults["openai/gpt-4o-mini"] = {"calls": [("move", {"direction": "north"})], "usage": (40, 5)}
    with self_hosted(srv, fake.url + "/v1") as c:
        rid = launch(c, 10, [SEAT, {"model": "openai/gpt-4o-mini", "name": "gpt"}])
        body = wait_terminal(c, rid)
        run = body["run"]
        qwen, gpt = run["roster"]
        assert run["status"] == "finished"
        assert qwen["turns"] == {"answered": 10, "invalid": 10, "timed_out": 0, "provider_errors": 0, "retries": 0}
        assert gpt["turns"]["answered"] == 10 and gpt["turns"]["invalid"] == 0
        page = c.get(f"/api/v1/runs/{rid}/transcript", params={"seat": 0, "limit": 4}).json()
        assert len(page["turns"]) == 4 and page["next_cursor"] == "4"
        first = page["turns"][0]
        assert first["tick"] == 0 and first["seat"] == 0
        assert first["reply"] == GARBAGE
        assert first["actions"] == [] and first["refused"][0].startswith("unknown_action: malformed reply")
        assert first["input_tokens"] == 50 and first["output_tokens"] == 12 and first["latency_ms"] > 0
        assert first["error"] is None
        rest = c.get(f"/api/v1/runs/{rid}/transcript", params={"seat": 0, "cursor": page["next_cursor"]}).json()
        assert [t["tick"] for t in rest["turns"]] == list(range(4, 10)) and rest["next_cursor"] is None
        both = c.get(f"/api/v1/runs/{rid}/transcript").json()["turns"]
        assert len(both) == 20 and [t["seat"] for t in both[:2]] == [0, 1]
        assert both[1]["actions"] == [{"direction": "north", "action": "move"}]
        assert json.loads(both[1]["reply"])[0]["name"] == "move"
        bad = c.get(f"/api/v1/runs/{rid}/transcript", params={"seat": 2})
        assert bad.status_code == 400 and bad.json()["error"] == "bad_request"
        # never on the public pages
        for link in run["links"].values():
            assert "PLAN-TAIL" not in c.get(link).text
    with self_hosted(srv, fake.url + "/v1") as other:  # another account: not its run
        assert other.get(f"/api/v1/runs/{rid}/transcript").json()["error"] == "unknown_run"


def test_self_hosted_seats_are_free_unless_the_key_carries_a_price(srv, fake):
    fake.defaults["qwen2.5-7b"] = {"calls": [("gather", {})], "usage": (1000, 100)}
    with self_hosted(srv, fake.url + "/v1") as c:
        est = c.post("/api/v1/runs/estimate", json={"scenario_id": "svc:custom-base-v1", "season_ticks": 2000,
                                                    "roster": [SEAT]}).json()["batch"]
        assert est["usd"]["high"] == 0 and est["seats"][0]["priced"] == "free" and est["prices_as_of"]
        run = wait_terminal(c, launch(c, 10, [SEAT]))["run"]
        assert run["status"] == "finished" and run["spend"]["usd"] == 0 and run["roster"][0]["usage"]["usd"] == 0
    with self_hosted(srv, fake.url + "/v1", price=(2.0, 10.0)) as c:
        est = c.post("/api/v1/runs/estimate", json={"scenario_id": "svc:custom-base-v1", "season_ticks": 10,
                                                    "roster": [SEAT]}).json()["batch"]
        assert est["seats"][0]["priced"] == "key" and est["usd"]["high"] > 0
        run = wait_terminal(c, launch(c, 10, [SEAT]))["run"]
        assert run["roster"][0]["usage"]["usd"] == pytest.approx(10 * (1000 * 2.0 + 100 * 10.0) / 1e6)
        assert run["spend"]["usd"] == pytest.approx(run["roster"][0]["usage"]["usd"])


def test_cancel_with_a_hung_provider_ends_within_two_seconds(srv, fake):
    fake.defaults["qwen2.5-7b"] = {"calls": [("wait", {})], "delay_ms": 60_000}
    with self_hosted(srv, fake.url + "/v1") as c:
        rid = launch(c, 50, [SEAT], turn_timeout_ms=60_000)
        wait_for(lambda: fake.bodies("qwen2.5-7b"))
        t0 = time.monotonic()
        answer = c.post(f"/api/v1/runs/{rid}/cancel").json()
        run = wait_terminal(c, rid, timeout=10)["run"]
        took = time.monotonic() - t0
    assert answer["cancelled"] is True and run["status"] == "cancelled"
    assert took < 2.0, f"cancel took {took:.2f} s"


def test_kill_9_of_a_worker_keeps_every_metered_token(srv, fake):
    fake.defaults["qwen2.5-7b"] = {"calls": [("gather", {})], "usage": (100, 10), "delay_ms": 30}
    with self_hosted(srv, fake.url + "/v1", price=(1.0, 1.0)) as c:
        rid = launch(c, 40, [SEAT])
        # live: turns, usage and spend move while the run plays
        live = wait_for(lambda: (lambda r: r if (r["live"] or {}).get("tick", 0) >= 10 else None)(
            c.get(f"/api/v1/runs/{rid}").json()["run"]))
        assert live["status"] == "running" and live["roster"][0]["turns"]["answered"] >= 9
        assert live["roster"][0]["usage"]["input_tokens"] >= 900 and live["spend"]["usd"] > 0
        worker = srv.dispatcher.by_run[rid]
        os.kill(ray.get(worker.pid.remote()), signal.SIGKILL)
        run = wait_terminal(c, rid, timeout=90)["run"]
    served = len(fake.bodies("qwen2.5-7b"))
    seat = run["roster"][0]
    # resumed from its recorded turns on another worker: each answer was recorded as it arrived, so at
    # most the request in flight when the worker died was served without being metered
    assert run["status"] == "finished" and seat["turns"]["answered"] == 40
    assert served - 1 <= seat["turns"]["answered"] <= served
    assert seat["usage"]["input_tokens"] == 100 * seat["turns"]["answered"]
    assert run["spend"]["usd"] == pytest.approx(seat["usage"]["usd"]) and run["spend"]["usd"] > 0
    assert run["agent_turns"]["settled"] == seat["usage"]["agent_turns"] == 40


def test_a_restart_keeps_what_was_metered_for_a_model_run(tmp_path, fake):
    """kill -9 of the service: the store holds what the recorder wrote; the next start settles it."""
    srv = start(tmp_path / "data", dispatch=False)
    try:
        with self_hosted(srv, fake.url + "/v1", price=(1.0, 1.0)) as c:
            rid = launch(c, 300, [SEAT])
            with srv.core.store.write() as w:  # as a dispatcher that died after handing the run over
                w.execute("UPDATE runs SET status = 'running', match_id = 'm1', started_at_ms = 1 WHERE id = ?", (rid,))
            metered = {"usage": {"agent_turns": 41, "input_tokens": 4100, "output_tokens": 410, "usd": 0.00451},
                       "turns": {"answered": 41, "invalid": 0, "timed_out": 0, "provider_errors": 0, "retries": 0}}
            assert record(srv.core, rid, 41, {0: metered})
            assert c.get(f"/api/v1/runs/{rid}").json()["run"]["spend"]["usd"] == pytest.approx(0.00451)
            Dispatcher(srv.core).reconcile()  # what the next start does: the run resumes, keeping its spend
            run = c.get(f"/api/v1/runs/{rid}").json()["run"]
            assert run["status"] == "queued" and run["error"] is None
            assert run["roster"][0]["usage"] == metered["usage"] and run["spend"]["usd"] == pytest.approx(0.00451)
            assert srv.core.store.one("SELECT resumes FROM runs WHERE id = ?", (rid,))["resumes"] == 1
            month = c.get("/api/v1/usage").json()["months"][0]
            assert month["usd"]["account"] == pytest.approx(0.00451)
            assert not record(srv.core, rid, 42, {0: metered})  # a late report never writes into a queued run
    finally:
        srv.stop()


def test_a_service_that_stops_keeps_what_played_for_the_next_start(tmp_path, fake):
    """SIGTERM (uvicorn's graceful exit): the model run stops at a tick boundary and waits, queued with
    every metered tick, for the next start to resume it (tests/runs/test_model_resume.py plays that)."""
    fake.defaults["qwen2.5-7b"] = {"calls": [("gather", {})], "usage": (100, 10), "delay_ms": 30}
    srv = start(tmp_path / "data")
    with self_hosted(srv, fake.url + "/v1", price=(1.0, 1.0)) as c:
        rid = launch(c, 2000, [SEAT])
        wait_for(lambda: (c.get(f"/api/v1/runs/{rid}").json()["run"]["live"] or {}).get("tick", 0) >= 5)
    srv.stop()
    row = srv.core.store.one("SELECT status, error, roster, spend_usd, turns_settled FROM runs WHERE id = ?", (rid,))
    seat = json.loads(row["roster"])[0]
    assert row["status"] == "queued" and row["error"] is None and row["turns_settled"] is None
    assert seat["turns"]["answered"] >= 5 and seat["usage"]["input_tokens"] == 100 * seat["turns"]["answered"]
    assert seat["turns"]["answered"] == len(fake.bodies("qwen2.5-7b"))  # drained: nothing in flight was lost
    assert row["spend_usd"] == pytest.approx(seat["usage"]["usd"]) and row["spend_usd"] > 0
