"""A key's check finds whether its server makes tool calls; admission, through REST, refuses a seat of
format tools on a server without them and plays an unset format as json there. The servers are real
HTTP doubles on 127.0.0.1: one that ignores `tools` as llama-cpp-python does with a chat format that has
no tool calls, one that refuses them as Ollama does, and one that has them."""
import httpx
import pytest

from orchestrator.seats import keys
from orchestrator.accounts import by_email
from tests.api.util import bearer
from tests.seats.fake_provider import FakeProvider

LOCAL = {"model": "local/honest-trader"}


def body(*seats) -> dict:
    return {"scenario_id": "svc:custom-base-v1", "season_ticks": 20, "roster": [*seats, LOCAL]}


@pytest.fixture
def held_key(live, make_account):
    """held_key(tools_mode, provider) -> (REST client of an account whose key's server was checked)."""
    made = []

    def make(mode: str, provider: str = "openai-compatible") -> httpx.Client:
        fake = FakeProvider().start()
        fake.models = [{"id": "smollm2", "object": "model"}]
        fake.tools = mode
        acct = make_account("lab")
        keys.set_key(live.core, email=acct.email, provider=provider, key="k-local", base_url=fake.url + "/v1")
        keys.check_key(live.core, by_email(live.core, acct.email).id, provider)
        client = httpx.Client(base_url=live.url, headers=bearer(acct.token()), timeout=10)
        made.append((fake, client))
        return client
    yield make
    for fake, client in made:
        client.close()
        fake.stop()


@pytest.mark.parametrize("mode", ["ignore", "refuse"])
def test_format_tools_on_a_server_without_tool_calls_is_refused_at_estimate_and_launch(held_key, mode):
    c = held_key(mode)
    seat = {"model": "smollm2", "provider": "openai-compatible", "format": "tools"}
    answers = [c.post(path, json=body(seat)) for path in ("/api/v1/runs/estimate", "/api/v1/runs")]
    for r in answers:
        assert r.status_code == 400 and r.json()["error"] == "bad_roster", r.text
        message = r.json()["message"]
        assert message.startswith("roster[0] (model smollm2): ") and "format: json" in message
        assert "openai-compatible key's server has none" in message
    assert answers[0].json() == answers[1].json()
    assert c.get("/api/v1/runs").json()["runs"] == []


def test_an_unset_format_plays_json_on_a_server_without_tool_calls(held_key):
    c = held_key("ignore")
    seat = {"model": "smollm2", "provider": "openai-compatible"}
    est = c.post("/api/v1/runs/estimate", json=body(seat))
    assert est.status_code == 200, est.text
    launched = c.post("/api/v1/runs", json=body(seat, dict(seat, format="json")))
    assert launched.status_code == 201, launched.text
    roster = launched.json()["run"]["roster"]
    assert [s["format"] for s in roster] == ["json", "json", "tools"]  # the local seat keeps the default
    assert roster[0]["scaffold"].endswith("/json")


def test_a_server_with_tool_calls_takes_format_tools_and_keeps_the_default(held_key):
    c = held_key("calls")
    seat = {"model": "smollm2", "provider": "openai-compatible"}
    launched = c.post("/api/v1/runs", json=body(dict(seat, format="tools"), seat))
    assert launched.status_code == 201, launched.text
    assert [s["format"] for s in launched.json()["run"]["roster"]][:2] == ["tools", "tools"]
