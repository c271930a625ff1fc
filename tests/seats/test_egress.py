"""docs/api.md at connect time: a seat's client reaches only public addresses unless its
credential may reach private ones; the host is resolved and checked in the connect hook itself; a
redirect is handed back, never followed. Also the address rule and the key check (probe)."""
import httpx
import pytest
from starlette.responses import Response

from orchestrator import egress
from orchestrator.errors import DomainError
from orchestrator.seats import SeatPlayer, new_client, play_tick
from orchestrator.seats.probe import probe
from orchestrator.seats.faults import SeatFailed
from orchestrator.seats.keyed import Keyed, OffOrigin
from orchestrator.seats.transport import AddressRefused
from tests.seats.conftest import external_match, run
from tests.seats.fake_provider import FakeProvider

ROUTER = {"model": "r/m", "provider": "router"}

NOT_PUBLIC = ["127.0.0.1", "10.0.0.5", "172.16.3.4", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
              "224.0.0.1", "255.255.255.255", "::1", "::", "fd00::1", "fe80::1", "::ffff:127.0.0.1",
              "::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe", "2002:7f00:1::", "192.0.2.1"]


@pytest.mark.parametrize("address", NOT_PUBLIC)
def test_private_and_special_addresses_are_not_public(address):
    assert not egress.is_public(address)


@pytest.mark.parametrize("address", ["8.8.8.8", "93.184.215.14", "2606:4700:4700::1111"])
def test_public_addresses_are_public(address):
    assert egress.is_public(address)


@pytest.mark.parametrize("url", [
    "file:///etc/passwd", "gopher://127.0.0.1:6379/_INFO", "ftp://93.184.215.14/", "http:///nohost",
    "http://169.254.169.254/latest/meta-data/", "http://metadata.google.internal./computeMetadata/v1/",
    "http://10.0.0.5:8000/v1", "http://localhost:8000/api/v1", "http://[::ffff:127.0.0.1]:8000/",
    "http://2130706433:8000/", "http://0x7f.1:8000/", "http://127.0.0.1:11434@169.254.169.254/",
    "http://127.0.0.1:114/v1",  # the allowed entry's host, another port
])
def test_an_account_may_not_store_a_url_that_is_not_public(url):
    config = {"providers": {"allow_base_urls": ["http://127.0.0.1:11434"]}}
    with pytest.raises(DomainError) as e:
        egress.check_account_url(url, config)
    assert e.value.code == "bad_base_url" and e.value.status == 400
    assert "allow_base_urls" in e.value.message  # the message names the rule


def test_public_and_allowed_urls_pass():
    config = {"providers": {"allow_base_urls": ["http://127.0.0.1:11434", "https://10.1.2.3/llm/"]}}
    egress.check_account_url("https://93.184.215.14/v1", config)
    egress.check_account_url("http://127.0.0.1:11434", config)
    egress.check_account_url("http://127.0.0.1:11434/v1", config)
    egress.check_account_url("https://10.1.2.3/llm/v1", config)
    with pytest.raises(DomainError):  # under the entry's path only
        egress.check_account_url("https://10.1.2.3/other", config)
    with pytest.raises(DomainError, match="this service itself"):
        egress.check_account_url("https://93.184.215.14/api/v1", {}, own=("https://93.184.215.14",))


def test_the_connect_hook_refuses_loopback_whatever_the_name():
    with FakeProvider() as fake:
        fake.models = [{"id": "m"}]
        for url in (fake.url + "/v1/models", f"http://localhost:{fake.port}/v1/models"):
            with pytest.raises(AddressRefused, match="not a public address"):
                run(new_client().get(url))
        assert fake.requests == []  # nothing reached the double
        r = run(new_client(private_ok=True).get(fake.url + "/v1/models"))
        assert r.status_code == 200  # the operator's permission travels with the credential


def test_a_seat_whose_url_resolves_to_a_private_address_fails_naming_the_rule():
    with FakeProvider({"calls": [("eat", {})]}) as fake:
        async def go():
            async with new_client() as client:  # an account's key: no permission for private addresses
                players = {0: SeatPlayer(0, ROUTER, key="k", client=client, base_url=fake.url + "/v1",
                                         turn_timeout_ms=3000)}
                return await play_tick(external_match(1), players)
        with pytest.raises(SeatFailed, match=r"roster\[0\].*not a public address.*allow_base_urls"):
            run(go())
        assert fake.requests == []


def test_a_redirect_is_handed_back_not_followed():
    with FakeProvider() as target, FakeProvider() as fake:
        fake.default = {"status": 307, "headers": {"location": target.url + "/v1/chat/completions"}}

        async def go():
            async with new_client(private_ok=True) as client:
                players = {0: SeatPlayer(0, ROUTER, key="k", client=client, base_url=fake.url + "/v1",
                                         turn_timeout_ms=1500)}
                return await play_tick(external_match(1), players), players
        report, players = run(go())
        assert report.waits == {0: "no_reply"} and "HTTP 307" in players[0].last_error
        assert len(fake.requests) >= 1 and target.requests == []


def test_probe_says_ok_rejected_or_unreachable():
    with FakeProvider() as fake:
        fake.rejected_keys.add("k-bad")
        fake.key_info = {"limit_remaining": 2.0}
        base = fake.url + "/v1"
        assert probe("openai-compatible", "k-good", base, private_ok=True)[0] == "ok"
        status, detail = probe("openai-compatible", "k-bad", base, private_ok=True)
        assert status == "rejected" and "401" in detail
        assert probe("anthropic", "k-bad", fake.url, private_ok=True)[0] == "rejected"
        assert probe("anthropic", "k-good", fake.url, private_ok=True)[0] == "ok"
        assert probe("router", "k-good", base, private_ok=True)[0] == "ok"
        assert probe("router", "k-bad", base, private_ok=True)[0] == "rejected"
        assert probe("ollama", "", fake.url, private_ok=True)[0] == "ok"  # keyless, /v1 appended
        headers = [r["headers"] for r in fake.requests]
        assert headers[0]["authorization"] == "Bearer k-good"
        assert headers[2]["x-api-key"] == "k-bad" and headers[2]["anthropic-version"]
        status, detail = probe("openai-compatible", "k-good", base, private_ok=False)
        assert status == "unreachable" and "not a public address" in detail
    status, detail = probe("openai-compatible", "k", "http://127.0.0.1:9/v1", private_ok=True)
    assert status == "unreachable" and "GET http://127.0.0.1:9/v1/models" in detail
    with pytest.raises(httpx.ConnectError):  # AddressRefused is an httpx.ConnectError for other callers
        run(new_client().get("http://127.0.0.1:9/"))


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:11434/v1/../../escaped", "http://127.0.0.1:11434/v1/%2e%2e/%2E%2E/escaped",
    "http://127.0.0.1:11434/v1%2F..%2F..%2Fescaped", "http://127.0.0.1:11434/v1/..%5C..%5Cescaped",
    "http://127.0.0.1:11434/v1/x/../../escaped", "http://127.0.0.1:11434/v10",
])
def test_an_allowed_prefix_is_matched_on_the_normalised_path(url):
    """Issue 38 F5: `/v1/../../escaped` is where httpx sends the request (`/escaped/models`), and a
    server that decodes before routing reads `%2e%2e` and `%2F` the same: not under the entry `/v1`."""
    config = {"providers": {"allow_base_urls": ["http://127.0.0.1:11434/v1"]}}
    assert not egress.allowed(url, egress.allow_list(config))
    with pytest.raises(DomainError) as e:
        egress.check_account_url(url, config)
    assert e.value.code == "bad_base_url"


def test_what_normalises_under_an_allowed_prefix_passes():
    entries = ("http://127.0.0.1:11434/v1",)
    for url in ("http://127.0.0.1:11434/v1/./x/../y", "http://user:pw@127.0.0.1:11434/v1",
                "HTTP://127.0.0.1:11434/v1/", "http://127.0.0.1:11434/v1/x/.."):
        assert egress.allowed(url, entries), url


@pytest.mark.parametrize("link", [
    "http://127.0.0.1:8001/x", "//127.0.0.1:8001/x", "https://127.0.0.1:8000/v1/x", "http://localhost:8000/v1/x",
    "http://127.0.0.1:8000@127.0.0.1:8001/x", "http://127.0.0.2:8000/v1/x", "file:///etc/passwd", "javascript:x",
    "http://[::1]:8000/v1/x", "http://[::1/",
])
def test_a_key_is_never_sent_to_another_origin(link):
    """Issue 50 F3: one helper builds every request that carries a key; a URL on another origin than
    the key's base URL (scheme, host and port) is refused before anything is sent."""
    keyed = Keyed("http://127.0.0.1:8000/v1/", {"Authorization": "Bearer k"})
    page = keyed.url("/models")
    with pytest.raises(OffOrigin, match="the origin the key was stored for"):
        keyed.follow(page, link)
    with pytest.raises(OffOrigin):
        keyed.request("GET", link)


def test_links_on_the_keys_origin_are_followed():
    keyed = Keyed("http://127.0.0.1:80/v1", {"Authorization": "Bearer k"})
    page = keyed.url("/models")
    assert str(page) == "http://127.0.0.1/v1/models"  # httpx drops the scheme's own port
    for link, url in (("?page=2", "http://127.0.0.1/v1/models?page=2"),
                      ("/v1/models?after=x", "http://127.0.0.1/v1/models?after=x"),
                      ("http://127.0.0.1/v1/models?p=3", "http://127.0.0.1/v1/models?p=3"),  # port 80 spelled or not
                      ("HTTP://127.0.0.1:80/other", "http://127.0.0.1/other")):
        assert str(keyed.follow(page, link)) == url
    assert keyed.request("GET", page).headers["authorization"] == "Bearer k"


def test_a_redirect_to_another_origin_is_not_followed_and_is_named():
    """The key check and a seat's call answered with a redirect elsewhere: nothing reaches the other
    origin, and what is reported names where the redirect pointed."""
    with FakeProvider() as target, FakeProvider() as fake:
        elsewhere = target.url + "/v1/models"
        fake.model_page = lambda query: Response(status_code=302, headers={"location": elsewhere})
        status, detail = probe("openai-compatible", "k-good", fake.url + "/v1", private_ok=True)
        assert status == "unreachable" and f"HTTP 302, a redirect to {elsewhere} (redirects are not followed" in detail
        fake.default = {"status": 307, "headers": {"location": f"//127.0.0.1:{target.port}/v1/chat/completions"}}

        async def go():
            async with new_client(private_ok=True) as client:
                players = {0: SeatPlayer(0, ROUTER, key="k", client=client, base_url=fake.url + "/v1",
                                         turn_timeout_ms=1500)}
                return await play_tick(external_match(1), players), players
        report, players = run(go())
        assert report.waits == {0: "no_reply"}
        assert f"HTTP 307, a redirect to {target.url}/v1/chat/completions" in players[0].last_error
        assert target.requests == []
