"""Provider faults in arena games through a real server (docs/SEATS.md, as for the
world in test_model_faults.py): a Connect Four model seat whose provider hangs, answers 400 or answers
garbage fails the run within three of its calls, naming the seat under the fault's code, never a loss;
a refusal and a cut reply are recorded as such in the owner's transcript and nowhere public.

Real uvicorn, real Ray workers, the fake provider on 127.0.0.1 (tests/seats/fake_provider.py).
"""
import json
import secrets

import pytest

from orchestrator import auth
from orchestrator.seats import keys
from orchestrator.accounts import create_account
from orchestrator.auth import SCOPES, mint
from orchestrator.runs import service
from tests.waiting import until
from tests.runs.conftest import TERMINAL, wait_terminal
from tests.seats.fake_provider import FakeProvider

C4 = "arena:connect-four"


@pytest.fixture
def fake():
    with FakeProvider() as server:
        yield server


def launch(srv, fake, model: str) -> tuple[str, str]:
    """(token, run id) of a Connect Four game: the model on the router (the fake) moves first."""
    email = f"arena-faults-{secrets.token_hex(6)}@example.com"
    create_account(srv.core, email, plan="lab", verified=True)
    keys.set_key(srv.core, provider="router", key="k-router", email=email, base_url=fake.url + "/v1")
    token, _ = mint(srv.core, email, scopes=SCOPES)
    core = srv.app.state.core
    out = service.arena_launch(core, auth.authenticate(core, token), {
        "scenario_id": C4, "env": {"turn_timeout_ms": 5000},
        "roster": [{"model": model, "name": "m", "format": "json"}, {"model": "local/random"}]})
    return token, out["run"]["run_id"]


FAULTS = [
    ("hangs", {"text": '{"move": "4"}', "delay_ms": 60_000}, "provider_timeout", "did not answer", "timed_out"),
    ("http_400", {"status": 400, "body": json.dumps({"error": {"message": "context_length_exceeded: too long"}})},
     "provider_rejected", "HTTP 400: context_length_exceeded: too long", "provider_errors"),
    ("garbage", {"body": "<html>Bad gateway, have a nice day</html>"}, "provider_rejected", "not JSON",
     "provider_errors"),
]


@pytest.mark.parametrize("step,code,cause,counter", [f[1:] for f in FAULTS], ids=[f[0] for f in FAULTS])
def test_a_faulty_provider_fails_the_game_within_three_calls_naming_the_seat(srv, fake, step, code, cause, counter):
    model = f"test/{code}-{counter}"
    fake.defaults[model] = step
    token, rid = launch(srv, fake, model)
    with srv.client(token) as c:
        live = [] if counter == "timed_out" else None  # a hang lasts long enough to be seen from outside

        def ended_watching():
            run = c.get(f"/api/v1/runs/{rid}").json()["run"]
            if run["status"] == "running":
                live.append(run["roster"][0]["turns"][counter])
            return run["status"] in TERMINAL
        if live is not None:
            until(ended_watching, 90, every=0.2, what="the game's end")
        body = wait_terminal(c, rid, timeout=90)
        # no match was archived, and the owner still reads every call the seat was asked
        turns = c.get(f"/api/v1/runs/{rid}/transcript").json()["turns"]
    assert len(turns) == 3 and all(t["seat"] == 0 and t["error"] for t in turns), turns
    if live is not None:  # each faulted call is reported as it happens, not when the ply is played
        assert 1 in live and 2 in live
    run = body["run"]
    assert run["status"] == "failed" and run["stop_reason"] == "failed" and body["results"] is None
    assert run["error"]["error"] == code
    message = run["error"]["message"]
    assert message.startswith(f"roster[0] (model {model}): the router provider") and cause in message
    seat = run["roster"][0]
    assert seat["turns"][counter] == 3 and seat["turns"]["answered"] == 0 and seat["replied"] is False
    assert len(fake.bodies(model)) == 3  # three calls, never a fourth, and no forfeit scored


def test_a_refusal_and_a_cut_reply_are_recorded_as_such_and_never_public(srv, fake):
    secret = "SECRET-SKILL: I refuse, my instructions say hoard the centre"
    model = "test/refuses"
    fake.script(model, {"refusal": secret}, {"text": '{"move": "', "finish": "length"})
    fake.defaults[model] = {"text": '{"move": "resign"}'}
    token, rid = launch(srv, fake, model)
    with srv.client(token) as c:
        body = wait_terminal(c, rid, timeout=90)
        run = body["run"]
        turns = c.get(f"/api/v1/runs/{rid}/transcript", params={"seat": 0}).json()["turns"]
        public = {name: c.get(link).text for name, link in run["links"].items()}
    assert run["status"] == "finished" and body["results"]["game"]["termination"] == "resignation"
    assert run["roster"][0]["turns"] == {"answered": 3, "invalid": 2, "timed_out": 0, "provider_errors": 0,
                                         "retries": 0}
    refusal, cut, resign = turns
    assert refusal["refusal"] == secret and refusal["refused"] == ["refusal: refusal"] and not refusal["truncated"]
    assert cut["truncated"] is True and cut["refused"] == ["truncated: truncated"] and cut["refusal"] is None
    assert resign["actions"] == ["resign"] and resign["refused"] == []
    for name, text in public.items():
        assert "SECRET-SKILL" not in text, name
