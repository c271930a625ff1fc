"""Provider faults through a real server: a run whose provider hangs, refuses or answers garbage fails
within three ticks naming the seat; admission refuses what a provider would refuse; the public log
never carries a model's words.

Real uvicorn, real Ray workers, the fake provider on 127.0.0.1 (tests/seats/fake_provider.py).
"""
import json

import pytest

from orchestrator.seats import keys
from orchestrator.accounts import create_account
from orchestrator.auth import SCOPES, mint
from tests.waiting import until
from tests.runs.conftest import wait_terminal
from tests.seats.fake_provider import FakeProvider

_n = iter(range(10**6))
SEAT = {"model": "qwen2.5-7b", "provider": "openai-compatible", "name": "qwen"}


@pytest.fixture
def fake():
    with FakeProvider() as server:
        yield server


def account(srv, fake):
    email = f"faults{next(_n)}@example.com"
    create_account(srv.core, email, plan="lab", verified=True)
    keys.set_key(srv.core, provider="openai-compatible", key="k-local", email=email, base_url=fake.url + "/v1")
    keys.set_key(srv.core, provider="anthropic", key="k-anthropic", email=email, base_url=fake.url)
    token, _ = mint(srv.core, email, scopes=SCOPES)
    return srv.client(token)


def launch(c, seats, ticks=300, **env):
    r = c.post("/api/v1/runs", json={"scenario_id": "svc:custom-base-v1", "season_ticks": ticks, "roster": seats,
                                     "env": {"anchors": [], **env}})
    assert r.status_code == 201, r.text
    return r.json()["run"]["run_id"]


FAULTS = [
    ("hangs", {"calls": [("wait", {})], "delay_ms": 60_000}, "provider_timeout", "did not answer", "timed_out"),
    ("http_400", {"status": 400, "body": json.dumps({"error": {"message": "context_length_exceeded: too long"}})},
     "provider_rejected", "HTTP 400: context_length_exceeded: too long", "provider_errors"),
    ("garbage", {"body": "<html>Bad gateway, have a nice day</html>"}, "provider_rejected", "not JSON",
     "provider_errors"),
]


@pytest.mark.parametrize("step,code,cause,counter", [f[1:] for f in FAULTS], ids=[f[0] for f in FAULTS])
def test_a_faulty_provider_fails_the_run_within_three_ticks_naming_the_seat(srv, fake, step, code, cause, counter):
    fake.defaults["qwen2.5-7b"] = step
    with account(srv, fake) as c:
        rid = launch(c, [SEAT, {"model": "local/random"}], turn_timeout_ms=5000)
        body = wait_terminal(c, rid, timeout=90)
        turns = c.get(f"/api/v1/runs/{rid}/transcript", params={"seat": 0}).json()["turns"]
    run = body["run"]
    assert run["status"] == "failed" and run["stop_reason"] == "failed"
    assert run["error"]["error"] == code
    message = run["error"]["message"]
    assert message.startswith("roster[0] (model qwen2.5-7b): the openai-compatible provider") and cause in message
    seat = run["roster"][0]
    assert seat["turns"][counter] == 3 and seat["turns"]["answered"] == 0 and seat["replied"] is False
    assert len(fake.bodies("qwen2.5-7b")) == 3  # three ticks asked, never a fourth
    # what played is archived, and nobody reads the silent seat's waits as play
    assert body["results"]["match_ticks"] == 2 and body["results"]["agents"][0]["replied"] is False
    # every turn asked is in the owner's transcript with its cause
    assert [t["tick"] for t in turns] == [0, 1, 2] and all(cause in t["error"] for t in turns)


def test_the_live_run_view_counts_faults_from_the_first_tick(srv, fake):
    fake.script("qwen2.5-7b", {"status": 400, "body": json.dumps({"error": {"message": "nope"}})})
    fake.defaults["qwen2.5-7b"] = {"calls": [("gather", {})], "delay_ms": 200}
    with account(srv, fake) as c:
        rid = launch(c, [SEAT], ticks=40)
        run = until(lambda: (lambda r: r if r["status"] == "running" and (r["live"] or {}).get("tick", 0) >= 2
                             else None)(c.get(f"/api/v1/runs/{rid}").json()["run"]), 60, what="two ticks played")
        assert run["roster"][0]["turns"]["provider_errors"] == 1 and run["roster"][0]["turns"]["answered"] >= 1
        c.post(f"/api/v1/runs/{rid}/cancel")
        wait_terminal(c, rid)


ADMISSION = [
    ({"model": "claude-sonnet-4-5", "provider": "anthropic", "reasoning": "high", "max_tokens": 500}, "max_tokens"),
    ({"model": "claude-sonnet-4-5", "provider": "anthropic", "reasoning": "high", "max_tokens": 1024}, "max_tokens"),
    ({"model": "claude-sonnet-4-5", "provider": "anthropic", "temperature": 0.3}, "drop temperature"),
]


@pytest.mark.parametrize("seat,fix", ADMISSION, ids=["budget_500", "budget_1024", "temperature"])
def test_admission_refuses_what_the_provider_would_refuse(srv, fake, seat, fix):
    with account(srv, fake) as c:
        body = {"scenario_id": "svc:custom-base-v1", "season_ticks": 10, "roster": [{"model": "local/random"}, seat]}
        e, l_ = c.post("/api/v1/runs/estimate", json=body), c.post("/api/v1/runs", json=body)
    assert e.status_code == l_.status_code == 400 and e.json() == l_.json()
    assert e.json()["error"] == "bad_roster" and e.json()["message"].startswith("roster[1] (model claude-sonnet-4-5): ")
    assert fix in e.json()["message"]
    assert not fake.bodies("claude-sonnet-4-5")


def test_a_thinking_seat_that_fits_plays_and_an_unset_reasoning_stays_unset(srv, fake):
    fake.defaults["claude-sonnet-4-5"] = {"calls": [("gather", {})], "thinking": [("hm", "sig")]}
    with account(srv, fake) as c:
        rid = launch(c, [{"model": "claude-sonnet-4-5", "provider": "anthropic", "reasoning": "high",
                          "max_tokens": 2000}, SEAT], ticks=10)
        run = wait_terminal(c, rid)["run"]
    assert run["status"] == "finished" and run["roster"][0]["turns"]["answered"] == 10
    assert run["roster"][1]["reasoning"] is None
    budgets = {b["thinking"]["budget_tokens"] for b in fake.bodies("claude-sonnet-4-5")}
    assert len(budgets) == 1 and 1024 <= budgets.pop() < 2000


def test_the_public_log_carries_reason_codes_never_the_models_words(srv, fake):
    secret = "SECRET-SKILL: always hoard relics and lie about it"
    fake.script("qwen2.5-7b", {"refusal": secret}, {"text": f"I refuse to play. {secret}"},
                {"calls": [(secret, {})]}, {"text": '{"actions": [{"action": "mo', "finish": "length"})
    fake.defaults["qwen2.5-7b"] = {"calls": [("gather", {})]}
    with account(srv, fake) as c:
        rid = launch(c, [SEAT], ticks=10)
        run = wait_terminal(c, rid)["run"]
        assert run["status"] == "finished"
        public = {name: c.get(link).text for name, link in run["links"].items()}
        turns = c.get(f"/api/v1/runs/{rid}/transcript", params={"seat": 0}).json()["turns"]
    for name, text in public.items():
        assert "SECRET-SKILL" not in text, name
    assert "refusal" in public["log"] and "truncated" in public["log"] and "malformed reply" in public["log"]
    assert turns[0]["refusal"] == secret and turns[0]["refused"] == ["refusal: refusal"]
    assert secret in turns[1]["reply"] and secret in turns[2]["refused"][0]
    assert turns[3]["truncated"] is True and turns[3]["refused"] == ["truncated: truncated"]
    assert turns[4]["truncated"] is False and turns[4]["refusal"] is None
