"""Model seats through the API: a real fake provider on 127.0.0.1 for each wire protocol."""
import re

import pytest

from orchestrator.seats import keys
from orchestrator.accounts import create_account
from orchestrator.auth import SCOPES, mint
from tests.runs.conftest import wait_terminal
from tests.seats.fake_provider import FakeProvider

HEADING = "Your operator's directions"


@pytest.fixture
def fake():
    with FakeProvider() as server:
        yield server


_n = iter(range(10**6))


def model_account(srv, fake, *, router=True, anthropic=True, verified=True, balance=None, plan="lab"):
    email = f"models{next(_n)}@example.com"
    create_account(srv.core, email, plan=plan, verified=verified)
    if router:
        keys.set_key(srv.core, provider="router", key="k-router", email=email, base_url=fake.url + "/v1",
                     balance_usd=balance)
    if anthropic:
        keys.set_key(srv.core, provider="anthropic", key="k-anthropic", email=email, base_url=fake.url)
    token, _ = mint(srv.core, email, scopes=SCOPES)
    return srv.client(token), email


def roster():
    return [{"model": "openai/gpt-4o-mini", "name": "gpt"},
            {"model": "claude-haiku-4-5", "provider": "anthropic", "name": "claude"},
            {"model": "local/greedy-harvester"}]


def test_mixed_providers_and_anchors_play_a_full_run(srv, fake):
    fake.defaults["openai/gpt-4o-mini"] = {"calls": [("move", {"direction": "north"}), ("gather", {})],
                                          "usage": (120, 30)}
    fake.defaults["claude-haiku-4-5"] = {"calls": [("eat", {})], "usage": (90, 10)}
    c, _ = model_account(srv, fake)
    with c:
        run = c.post("/api/v1/runs", json={"scenario_id": "svc:custom-base-v1", "season_ticks": 12,
                                           "roster": roster()}).json()["run"]
        assert [s["funding"] for s in run["roster"]] == ["account", "account", "free"]
        body = wait_terminal(c, run["run_id"])
        log = c.get(body["run"]["links"]["log"]).text
    run, res = body["run"], body["results"]
    assert run["status"] == "finished" and res["match_ticks"] == 12 and res["field_size"] == 7
    gpt, claude, local = run["roster"]
    assert gpt["max_tokens"] == 1024 and local["max_tokens"] is None  # resolved: the provider default
    assert gpt["usage"]["input_tokens"] == 12 * 120 and gpt["usage"]["output_tokens"] == 12 * 30
    assert claude["usage"]["input_tokens"] == 12 * 90
    assert gpt["usage"]["usd"] > 0 and local["usage"]["usd"] == 0 and local["usage"]["agent_turns"] == 12
    assert run["spend"]["usd"] == pytest.approx(gpt["usage"]["usd"] + claude["usage"]["usd"])
    assert len(fake.bodies("openai/gpt-4o-mini")) == 12 and len(fake.bodies("claude-haiku-4-5")) == 12
    # the play-by-play says what each action did, or why it was refused
    assert re.search(r"gpt (moves north to \(\d+, \d+\)|tried to move \(direction north\): refused)", log)
    assert re.search(r"claude (eats \(satiety \d+, \d+ food left\)|tried to eat: refused)", log)


def test_skills_snapshot_at_launch_survives_edit_and_delete(srv, fake):
    c, _ = model_account(srv, fake)
    with c:
        own = c.post("/api/v1/skills", json={"name": "Hoarder", "text": "Keep every relic you find."}).json()["skill"]
        seats = [{"model": "openai/gpt-4o-mini", "skills": ["builtin:trader", own["id"]],
                  "instructions": "Greet agent three first."},
                 {"model": "openai/gpt-4o-mini", "name": "twin", "skills": ["builtin:trader", own["id"]],
                  "instructions": "Greet agent three first."}]
        rid = c.post("/api/v1/runs", json={"scenario_id": "svc:custom-base-v1", "season_ticks": 10,
                                           "roster": seats, "env": {"anchors": []}}).json()["run"]["run_id"]
        c.put(f"/api/v1/skills/{own['id']}", json={"text": "Sell every relic at once."})
        c.delete(f"/api/v1/skills/{own['id']}")
        run = wait_terminal(c, rid)["run"]
        played = run["roster"][0]["skills"]
        assert [s["text"] for s in played][1] == "Keep every relic you find."
        assert run["roster"][0]["scaffold"] == run["roster"][1]["scaffold"]
        assert "+custom." in run["roster"][0]["scaffold"]
        system = fake.bodies("openai/gpt-4o-mini")[-1]["messages"][0]["content"]
        from engine.skills import BUILTIN_SKILLS
        directions = system.split(HEADING, 1)[1]
        trader = directions.index(BUILTIN_SKILLS["builtin:trader"]["text"])
        assert trader < directions.index("Keep every relic you find.") < directions.index("Greet agent three first.")
        assert "Sell every relic" not in system
        public = c.get(run["links"]["match"]).json()["roster"][0]
        assert public["skills"] == ["builtin:trader"] and public["own_skills"] == 1


def test_rejected_key_fails_the_run_naming_seat_and_provider(srv, fake):
    fake.rejected_keys.add("k-anthropic")
    c, _ = model_account(srv, fake)
    with c:
        rid = c.post("/api/v1/runs", json={"scenario_id": "svc:custom-base-v1", "season_ticks": 10,
                                           "roster": roster()}).json()["run"]["run_id"]
        run = wait_terminal(c, rid)["run"]
    assert run["status"] == "failed" and run["stop_reason"] == "failed"
    assert "roster[1]" in run["error"]["message"] and "anthropic" in run["error"]["message"]
    # the first tick asked both model seats at once: the turn the router served was paid and stays metered
    gpt, claude = run["roster"][0], run["roster"][1]
    assert gpt["turns"]["answered"] == 1 and gpt["usage"]["usd"] > 0
    assert claude["turns"]["provider_errors"] == 1 and claude["replied"] is False
    assert run["agent_turns"]["settled"] == sum(seat["usage"]["agent_turns"] for seat in run["roster"])
    assert run["spend"]["usd"] == gpt["usage"]["usd"]


def test_unknown_model_fails_the_run_instead_of_waiting_out_the_season(srv, fake):
    fake.defaults["vendor/no-such-model"] = {"status": 404}
    c, _ = model_account(srv, fake)
    with c:
        rid = c.post("/api/v1/runs", json={"scenario_id": "svc:custom-base-v1", "season_ticks": 200,
                                           "roster": [{"model": "vendor/no-such-model"}]}).json()["run"]["run_id"]
        run = wait_terminal(c, rid)["run"]
    assert run["status"] == "failed" and run["error"]["error"] == "provider_model_unknown"
    assert "roster[0]" in run["error"]["message"] and "router" in run["error"]["message"]
    assert len(fake.bodies("vendor/no-such-model")) == 1  # one answer was enough


def test_spend_cap_stops_the_run(srv, fake):
    fake.defaults["openai/gpt-4o"] = {"calls": [("wait", {})], "usage": (200000, 1000)}  # ~$0.51 a turn
    c, _ = model_account(srv, fake)
    with c:
        rid = c.post("/api/v1/runs", json={"scenario_id": "svc:custom-base-v1", "season_ticks": 50,
                                           "max_spend_usd": 1.2, "roster": [{"model": "openai/gpt-4o"}]}
                     ).json()["run"]["run_id"]
        body = wait_terminal(c, rid)
    run = body["run"]
    assert run["status"] == "finished" and run["stop_reason"] == "spend_cap"
    assert body["results"]["match_ticks"] == 3 and run["spend"]["usd"] >= 1.2 and run["spend"]["cap_usd"] == 1.2


CODES = [
    ("bad_provider", {}, [{"model": "m", "provider": "telegraph"}]),
    ("router_key_required", {"router": False}, [{"model": "openai/gpt-4o-mini"}]),
    ("provider_key_required", {"anthropic": False}, [{"model": "claude-haiku-4-5", "provider": "anthropic"}]),
    ("router_balance_low", {"balance": 0.0001}, [{"model": "openai/gpt-4o"}]),
]


@pytest.mark.parametrize("code,acct,seats", CODES, ids=[c[0] for c in CODES])
def test_provider_refusals_through_estimate_and_launch(srv, fake, code, acct, seats):
    c, _ = model_account(srv, fake, **acct)
    with c:
        body = {"scenario_id": "svc:custom-base-v1", "season_ticks": 300, "roster": seats}
        e, l_ = c.post("/api/v1/runs/estimate", json=body), c.post("/api/v1/runs", json=body)
        assert e.json()["error"] == l_.json()["error"] == code
        assert e.json() == l_.json() and "roster[0]" in e.json()["message"]


def test_sponsored_seat_needs_a_verified_email(srv, fake):
    keys.set_key(srv.core, provider="openai", key="k-platform", platform=True, models=["gpt-4.1-nano"],
                 base_url=fake.url + "/v1")
    body = {"scenario_id": "svc:custom-base-v1", "season_ticks": 10,
            "roster": [{"model": "gpt-4.1-nano", "provider": "openai"}]}
    c, _ = model_account(srv, fake, router=False, anthropic=False, verified=False)
    with c:
        assert c.post("/api/v1/runs/estimate", json=body).json()["error"] == "email_unverified"
        assert c.post("/api/v1/runs", json=body).json()["error"] == "email_unverified"
    c, _ = model_account(srv, fake, router=False, anthropic=False, verified=True)
    with c:
        e = c.post("/api/v1/runs/estimate", json=body).json()["batch"]
        assert e["seats"][0]["funding"] == "platform" and e["usd"]["high"] > 0
        run = wait_terminal(c, c.post("/api/v1/runs", json=body).json()["run"]["run_id"])["run"]
        assert run["status"] == "finished" and run["roster"][0]["funding"] == "platform"
    assert fake.requests[-1]["headers"]["authorization"] == "Bearer k-platform"


def test_model_series_wall_clock_counts_the_model_workers(srv, fake):
    from orchestrator.workers import MODEL_JOBS_PER_WORKER, model_nodes

    c, _ = model_account(srv, fake)
    with c:
        body = {"scenario_id": "svc:custom-base-v1", "season_ticks": 10, "roster": [{"model": "openai/gpt-4o-mini"}]}
        one = c.post("/api/v1/runs/estimate", json=dict(body, trials=1)).json()["batch"]["wall_clock_ms"]
        fifty = c.post("/api/v1/runs/estimate", json=dict(body, trials=50)).json()["batch"]["wall_clock_ms"]
    # model workers by the nodes' CPUs, each playing hundreds of matches at once: a whole series is one
    # wave (0.5 s per tick at the low end), where 2 workers x 8 threads took four
    assert srv.dispatcher.capacity(False) == len(model_nodes()) * MODEL_JOBS_PER_WORKER >= 1000
    assert one["low"] == fifty["low"] == 500 * 10


def test_an_account_key_that_resolves_to_a_private_address_fails_the_run_at_connect(srv, fake):
    """docs/api.md, checked again where the seat connects: a key the account stored (here
    one from before the rule, or whose name now resolves to the loopback) never reaches that address."""
    email = f"models{next(_n)}@example.com"
    create_account(srv.core, email, plan="lab", verified=True)
    keys.set_key(srv.core, provider="router", key="k-router", email=email, base_url=fake.url + "/v1",
                 stored_by=keys.ACCOUNT)
    token, _ = mint(srv.core, email, scopes=SCOPES)
    with srv.client(token) as c:
        run = c.post("/api/v1/runs", json={"scenario_id": "svc:custom-base-v1", "season_ticks": 10,
                                           "roster": [{"model": "openai/gpt-4o-mini"}]}).json()["run"]
        run = wait_terminal(c, run["run_id"])["run"]
    assert run["status"] == "failed", run
    assert "not a public address" in run["error"]["message"] and "allow_base_urls" in run["error"]["message"]
    assert fake.requests == []
