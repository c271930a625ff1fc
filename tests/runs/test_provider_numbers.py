"""Issue 50, F5 (b) and (c): a provider reply whose usage JSON cannot carry (`usage.cost: 1e999`,
`prompt_tokens: 1e999`, as literal text) is a provider fault, `provider_rejected` after the fault rule's
three ticks, never a spend: the account's runs, run views, series and usage answer 200 afterwards, with
finite figures. Real uvicorn, real Ray, the fake provider (tests/seats/fake_provider.py) as the router."""
import json
import math

import pytest

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
