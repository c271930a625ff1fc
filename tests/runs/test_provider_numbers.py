"""Issue 50, F5 (b) and (c): a provider reply whose usage JSON cannot carry (`usage.cost: 1e999`,
`prompt_tokens: 1e999`, as literal text) is a provider fault, `provider_rejected` after the fault rule's
three ticks, never a spend: the account's runs, run views, series and usage answer 200 afterwards, with
finite figures. Real uvicorn, real Ray, the fake provider (tests/seats/fake_provider.py) as the router."""
import json
import math

import anyio
import pytest
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from tests.json_numbers import JSON, NUMBERS
from tests.mcp.conftest import call, connect
from tests.runs.conftest import wait_terminal
from tests.runs.test_model_seats import model_account
from tests.seats.fake_provider import FakeProvider, openai_completion

MODEL = "vendor/numbers"


@pytest.fixture
def fake():
    with FakeProvider() as server:
        yield server


def literal(**usage) -> dict:
    """A chat completion step whose usage fields are the given JSON texts (1e999 parses as infinity)."""
    body = openai_completion({"calls": [("gather", {})], "usage": (100, 20), "cost": 0.125})
    text = json.dumps(body)
    for field, raw in usage.items():
        old = '"cost": 0.125' if field == "cost" else f'"{field}": {body["usage"][field]}'
        assert old in text
        text = text.replace(old, f'"{field}": {raw}')
    return {"body": text}


@pytest.mark.parametrize("usage", [{"cost": "1e999"}, {"prompt_tokens": "1e999"}, {"completion_tokens": "-5"},
                                   {"prompt_tokens": "1" + "0" * 400}], ids=["cost", "prompt", "negative", "digits"])
def test_a_reply_with_usage_json_cannot_carry_fails_the_seat_not_the_account(srv, fake, usage):
    fake.defaults[MODEL] = literal(**usage)
    c, _ = model_account(srv, fake, anthropic=False, balance=100.0)
    with c:
        r = c.post("/api/v1/runs", json={"scenario_id": "svc:custom-base-v1", "season_ticks": 20, "trials": 2,
                                         "roster": [{"model": MODEL}, {"model": "local/random"}],
                                         "env": {"anchors": []}})
        assert r.status_code == 201, r.text
        batch = r.json()["batch"]
        runs = [wait_terminal(c, rid, timeout=120)["run"] for rid in batch["run_ids"]]
        for run in runs:
            assert run["status"] == "failed" and run["error"]["error"] == "provider_rejected", run["error"]
            assert "usage states" in run["error"]["message"]
            assert run["spend"]["usd"] == 0 and run["roster"][0]["usage"]["input_tokens"] == 0
            assert run["roster"][0]["turns"]["provider_errors"] == 3
        for path in ("/api/v1/runs", "/api/v1/usage", f"/api/v1/batches/{batch['batch_id']}",
                     *(f"/api/v1/runs/{run['run_id']}" for run in runs),
                     *(f"/api/v1/runs/{run['run_id']}/transcript" for run in runs)):
            got = c.get(path)
            assert got.status_code == 200, (path, got.text[:300])
        assert all(math.isfinite(m["usd"]["account"]) for m in c.get("/api/v1/usage").json()["months"])


def _number_text(x) -> str:
    return "1e400" if x == float("inf") else "-1e400" if x == float("-inf") else repr(x)


def _nested(depth: int):
    v = 1
    for _ in range(depth):
        v = {"a": v}
    return v


STEP = st.fixed_dictionaries({
    "usage": st.dictionaries(st.sampled_from(["prompt_tokens", "completion_tokens", "cost"]), NUMBERS, max_size=2),
    "args": st.one_of(st.dictionaries(st.text(max_size=5), JSON, max_size=3),
                      st.integers(0, 60).map(lambda d: {"direction": "north", "x": _nested(d)}))})


@settings(max_examples=4, deadline=None, database=None, phases=(Phase.explicit, Phase.generate),  # no shrinking:
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, min_size=6, max_size=6))
def test_property_arbitrary_usage_and_arguments_from_the_provider(srv, fake, steps):
    """Hypothesis through the provider double: each reply's usage numbers (as literal text) and its tool
    call's arguments arbitrary; afterwards every read of the run and account answers 200 and MCP's run
    and transcript are REST's."""
    model = f"vendor/prop-{len(fake.requests)}"
    for s in steps:
        body = openai_completion({"calls": [("move", s["args"])], "usage": (100, 20), "cost": 0.125})
        text = json.dumps(body)
        for field, x in s["usage"].items():
            old = '"cost": 0.125' if field == "cost" else f'"{field}": {body["usage"][field]}'
            text = text.replace(old, f'"{field}": {_number_text(x)}')
        fake.script(model, {"body": text})
    fake.defaults[model] = {"calls": [("wait", {})]}
    c, _ = model_account(srv, fake, anthropic=False, balance=100.0)
    token = c.headers["authorization"].split(" ", 1)[1]
    with c:
        r = c.post("/api/v1/runs", json={"scenario_id": "svc:custom-base-v1", "season_ticks": 10,
                                         "roster": [{"model": model}, {"model": "local/random"}],
                                         "env": {"anchors": []}})
        assert r.status_code == 201, r.text
        rid = r.json()["run"]["run_id"]
        wait_terminal(c, rid, timeout=120)
        seen = {}
        for path in ("/api/v1/runs", "/api/v1/usage", f"/api/v1/runs/{rid}", f"/api/v1/runs/{rid}/transcript",
                     f"/api/v1/runs/{rid}/export?format=inspect"):
            got = c.get(path)
            assert got.status_code == 200, (path, got.text[:300])
            seen[path] = got.json() if "export" not in path else None

    async def over_mcp():
        async with connect(srv, token) as client:
            return await call(client, "get_run", {"id": rid}), await call(client, "get_transcript", {"id": rid})
    (e1, run), (e2, transcript) = anyio.run(over_mcp)
    assert not e1 and not e2
    def settled(view):  # decision grading goes on after the run ends: its progress may move between reads
        return {k: v for k, v in view["run"].items() if k != "grading"}
    assert settled(run) == settled(seen[f"/api/v1/runs/{rid}"])
    assert transcript == seen[f"/api/v1/runs/{rid}/transcript"]
    spend = run["run"]["spend"]["usd"]
    assert spend is not None and math.isfinite(spend) and spend >= 0
