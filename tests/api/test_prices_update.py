"""`studio prices update` reads a router's own model list (a real HTTP double of OpenRouter's
GET /api/v1/models on 127.0.0.1) into the data dir's price table; the estimate, through REST, prices
with it, names its date, and warns once the table is older than 90 days (the service's clock moved,
no sleeps)."""
import datetime as dt
import json

import httpx
import pytest

from api.app import create_app
from api.cli import main
from orchestrator import accounts, auth
from orchestrator.seats import keys
from orchestrator.seats.funding import run_credentials
from orchestrator.clock import ManualClock
from orchestrator.core import Core
from orchestrator.play.head import _credentials
from orchestrator.seats.price_update import update
from orchestrator.seats.prices import PriceTable, estimate
from tests.api.conftest import CONFIG
from tests.api.util import bearer, free_port, start_server
from tests.seats.fake_provider import FakeProvider

DAY_MS = 86_400_000
SEAT = {"model": "vendor/priced"}  # a router seat the shipped table does not know
ROUTER_LIST = [
    {"id": "vendor/priced", "name": "Priced", "pricing": {"prompt": "0.000002", "completion": "0.00001"}},
    {"id": "openrouter/auto", "pricing": {"prompt": "-1", "completion": "-1"}},
]


def ms(day: str) -> int:
    return int(dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC).timestamp() * 1000)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("prices") / "data"
    data_dir.mkdir()
    (data_dir / "config.toml").write_text(CONFIG)
    clock = ManualClock(ms(PriceTable.shipped().as_of) + 10 * DAY_MS)
    port = free_port()
    server, thread = start_server(create_app(core=Core.open(data_dir, clock=clock)), port)
    core = Core.open(data_dir, clock=clock)  # the operator's, as the CLI opens it
    with FakeProvider() as router:
        router.models = ROUTER_LIST
        router.key_info = {"limit_remaining": 1000.0}
        accounts.create_account(core, "ops@example.org", plan="lab", verified=True)
        keys.set_key(core, provider="router", key="k-router", email="ops@example.org", base_url=router.url + "/v1")
        token, _ = auth.mint(core, "ops@example.org", scopes=auth.SCOPES)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=bearer(token), timeout=10) as c:
            yield c, core, clock, router, data_dir
    server.should_exit = True
    thread.join(timeout=10)


def estimated(c) -> dict:
    r = c.post("/api/v1/runs/estimate", json={"scenario_id": "svc:custom-base-v1", "season_ticks": 50,
                                             "roster": [SEAT, {"model": "local/honest-trader"}]})
    assert r.status_code == 200, r.text
    return r.json()["batch"]


def test_the_estimate_prices_with_the_routers_list_and_warns_when_it_ages(world):
    c, core, clock, router, _ = world
    before = estimated(c)
    assert before["seats"][0]["priced"] == "fallback" and before["prices_as_of"] == PriceTable.shipped().as_of
    assert before["warnings"] == []

    written = update(core, email="ops@example.org")
    day = dt.datetime.fromtimestamp(clock.now_ms() / 1000, dt.UTC).date().isoformat()
    assert written["as_of"] == day and written["models"] == 1 and written["source"] == router.url + "/v1/models"
    asked = [r for r in router.requests if r["path"] == "/v1/models"][-1]
    assert asked["headers"]["authorization"] == "Bearer k-router"

    after = estimated(c)
    assert after["seats"][0]["priced"] == "table" and after["prices_as_of"] == day and after["warnings"] == []
    own = estimate([SEAT], 50, prices=PriceTable({"vendor/priced": [2.0, 10.0]}, (5.0, 20.0)))
    assert after["usd"]["high"] == round(own["high"], 4) < before["usd"]["high"]

    clock.advance(90 * DAY_MS)
    assert estimated(c)["warnings"] == []
    clock.advance(DAY_MS)
    warned = estimated(c)["warnings"]
    assert len(warned) == 1 and f"dated {day}, 91 days ago (over 90)" in warned[0]
    # only seats priced from the table care how old it is
    r = c.post("/api/v1/runs/estimate", json={"scenario_id": "svc:custom-base-v1", "season_ticks": 50,
                                             "roster": [{"model": "local/random"}, {"model": "local/honest-trader"}]})
    assert r.json()["batch"]["warnings"] == []


def test_the_command_refuses_without_a_router_key_and_writes_the_table(world, capsys):
    *_, router, data_dir = world
    assert main(["prices", "update", "--data-dir", str(data_dir), "--platform"]) == 2
    assert "the platform holds no router key" in capsys.readouterr().err
    assert main(["prices", "update", "--data-dir", str(data_dir), "--email", "ops@example.org"]) == 0
    out = capsys.readouterr().out
    assert '"models": 1' in out and (data_dir / "prices.json").exists()
    router.models = [{"id": "openrouter/auto", "pricing": {"prompt": "-1", "completion": "-1"}}]
    assert main(["prices", "update", "--data-dir", str(data_dir), "--email", "ops@example.org"]) == 2
    assert "no model with a price" in capsys.readouterr().err
    router.models = ROUTER_LIST


def test_a_launched_seat_is_metered_at_the_services_table(world):
    """The worker meters with the row the head read from the data dir's table, not its shipped copy."""
    c, core, *_ = world
    assert update(core, email="ops@example.org")["models"] == 1
    r = c.post("/api/v1/runs", json={"scenario_id": "svc:custom-base-v1", "season_ticks": 10,
                                     "roster": [SEAT, {"model": "local/honest-trader"}]})
    assert r.status_code == 201, r.text
    creds = _credentials(run_credentials(core, r.json()["run"]["run_id"]))
    assert creds[0].price == [2.0, 10.0, 2.0, 2.0]
    metered = creds[0].table(SEAT["model"], PriceTable.shipped())
    assert metered.cost("router", SEAT["model"], 1_000_000, 1_000_000) == 12.0
    assert PriceTable.shipped().cost("router", SEAT["model"], 1_000_000, 1_000_000) != 12.0  # the fallback
    c.post(f"/api/v1/runs/{r.json()['run']['run_id']}/cancel")


def test_a_price_json_cannot_carry_is_skipped_and_reported(world, capsys):
    """Issue 50, F5 (a): 1e305 USD per token is infinite per million; it never reaches prices.json."""
    c, core, _, router, data_dir = world
    router.models = ROUTER_LIST + [{"id": "vendor/absurd", "pricing": {"prompt": "1e305", "completion": "0.00001"}},
                                   {"id": "vendor/huge", "pricing": {"prompt": 1e300, "completion": 1e-6}}]
    try:
        assert main(["prices", "update", "--data-dir", str(data_dir), "--email", "ops@example.org"]) == 0
    finally:
        router.models = ROUTER_LIST
    out = json.loads(capsys.readouterr().out)
    assert out["models"] == 1 and [s["model"] for s in out["skipped"]] == ["vendor/absurd", "vendor/huge"]
    assert "pricing.prompt '1e305'" in out["skipped"][0]["why"]
    table = json.loads((data_dir / "prices.json").read_text(), parse_constant=lambda name: pytest.fail(name))
    assert set(table["models"]) == {"vendor/priced"}
    for model in ("vendor/priced", "vendor/absurd"):
        r = c.post("/api/v1/runs/estimate", json={"scenario_id": "svc:custom-base-v1", "season_ticks": 50,
                                                 "roster": [{"model": model}]})
        assert r.status_code == 200, r.text
    assert c.get("/api/v1/usage").status_code == 200 and c.get("/api/v1/runs").status_code == 200
