"""`studio prices update` reads a router's own model list (a real HTTP double of OpenRouter's
GET /api/v1/models on 127.0.0.1) into the data dir's price table; the estimate, through REST, prices
with it, names its date, and warns once the table is older than 90 days (the service's clock moved,
no sleeps)."""
import datetime as dt
import http.server
import json
import threading

import httpx
import pytest
from starlette.responses import Response

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


class Elsewhere:
    """A server on another origin (127.0.0.1, another port) that records whatever reaches it and would
    answer a priced list: nothing carrying a router key may arrive here."""

    def __init__(self):
        seen = self.requests = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                seen.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}})
                body = json.dumps({"data": [{"id": "vendor/elsewhere",
                                             "pricing": {"prompt": "0.000001", "completion": "0.000001"}}]}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def allowed_router(tmp_path):
    """A data dir whose operator allows a fake router on 127.0.0.1, the router and another origin; an
    account's own router key (stored as the console stores it) and the platform's are both held."""
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    with FakeProvider() as router, Elsewhere() as other:
        (data_dir / "config.toml").write_text(f'[providers]\nallow_base_urls = ["{router.url}"]\n')
        core = Core.open(data_dir)
        accounts.create_account(core, "ana@example.org", plan="lab", verified=True)
        keys.set_own_key(core, email="ana@example.org", provider="router", key="k-account", base_url=router.url + "/v1")
        keys.set_key(core, provider="router", key="k-platform", platform=True, models=["vendor/priced"],
                     base_url=router.url + "/v1")
        yield data_dir, router, other


@pytest.mark.parametrize("owner, key", [(["--email", "ana@example.org"], "k-account"), (["--platform"], "k-platform"),
                                        ([], "k-platform")])
def test_a_next_link_to_another_origin_is_not_asked_and_is_reported(allowed_router, capsys, owner, key):
    """Issue 50 F3: `links.next` on another origin got the router key (urljoin takes absolute URLs).
    A relative link on the router's own origin is still followed."""
    data_dir, router, other = allowed_router
    second = {"id": "vendor/second", "pricing": {"prompt": "0.000003", "completion": "0.000004"}}
    router.model_page = lambda query: ({"data": ROUTER_LIST, "links": {"next": "/v1/models?page=2"}} if not query
                                       else {"data": [second], "links": {"next": other.url + "/x"}})
    assert main(["prices", "update", "--data-dir", str(data_dir), *owner]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    asked = [r for r in router.requests if r["path"] == "/v1/models"]
    assert [r["headers"]["authorization"] for r in asked] == [f"Bearer {key}"] * 2
    assert other.requests == []  # not the key, not anything
    assert out["models"] == 2 and len(out["refused"]) == 1
    assert other.url + "/x" in out["refused"][0] and "the origin the key was stored for" in out["refused"][0]
    assert set(json.loads((data_dir / "prices.json").read_text())["models"]) == {"vendor/priced", "vendor/second"}
    assert "not asked: links.next" in captured.err


@pytest.mark.parametrize("link", ["http://127.0.0.1:{other}/x", "//127.0.0.1:{other}/x",
                                  "http://127.0.0.1:{router}@127.0.0.1:{other}/x",
                                  "https://127.0.0.1:{router}/v1/models?page=2", "http://localhost:{router}/v1/x"])
def test_other_spellings_of_another_origin_are_refused(allowed_router, capsys, link):
    data_dir, router, other = allowed_router
    link = link.format(other=other.url.rsplit(":", 1)[1], router=router.port)
    router.model_page = lambda query: {"data": ROUTER_LIST, "links": {"next": link}}
    assert main(["prices", "update", "--data-dir", str(data_dir), "--platform"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["refused"] and "not asked: links.next" in captured.err
    assert other.requests == [] and len([r for r in router.requests if r["path"] == "/v1/models"]) == 1


def test_a_redirect_of_the_list_is_not_followed(allowed_router, capsys):
    data_dir, router, other = allowed_router
    router.model_page = lambda query: Response(status_code=307, headers={"location": other.url + "/x"})
    assert main(["prices", "update", "--data-dir", str(data_dir), "--email", "ana@example.org"]) == 2
    err = capsys.readouterr().err
    assert f"HTTP 307, a redirect to {other.url}/x (redirects are not followed" in err
    assert other.requests == [] and not (data_dir / "prices.json").exists()


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
