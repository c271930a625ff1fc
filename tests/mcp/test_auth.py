"""MCP auth (docs/api.md, "Authentication, scopes, limits"): the header or the api_key argument; bad
header tokens refused at the transport; the per-address ceiling on refusals shared with REST; the
DNS-rebinding protection an operator turns on."""
from __future__ import annotations


import httpx
import pytest
from mcp.shared.exceptions import MCPError

from api.app import create_app
from orchestrator import accounts, auth
from orchestrator.clock import ManualClock
from orchestrator.core import Core
from tests.api.util import MINUTE_START, expired_token, free_port, start_server
from tests.mcp.conftest import TOOLS, WITH_ID, call, connect, mcp_url, ok, rest
from tests.runs.conftest import account

UNKNOWN = "dsk_" + "0" * 64


def _owner(core, token: str) -> str:
    return core.store.one("SELECT a.email FROM accounts a JOIN tokens t ON t.account_id = a.id WHERE t.prefix = ?",
                          (token[:12],))["email"]


@pytest.mark.anyio
@pytest.mark.parametrize("header", ["bearer", "x-api-key"])
async def test_header_token_authenticates_every_call(idle, header):
    token = account(idle.core)
    async with connect(idle, token, header=header) as client:
        me = await ok(client, "whoami")
    assert me["token"]["prefix"] == token[:12]


@pytest.mark.anyio
async def test_api_key_argument_authenticates_without_a_header_and_wins_over_it(idle):
    a, b = account(idle.core), account(idle.core)
    async with connect(idle) as client:
        assert (await ok(client, "whoami", {"api_key": a}))["token"]["prefix"] == a[:12]
        assert (await ok(client, "list_scenarios", {"api_key": a})) == {"scenarios": []}
    async with connect(idle, a) as client:  # the argument names the token for this call
        assert (await ok(client, "whoami", {"api_key": b}))["token"]["prefix"] == b[:12]
        assert (await ok(client, "whoami", {"api_key": None}))["token"]["prefix"] == a[:12]  # null: absent


@pytest.mark.anyio
async def test_without_any_token_every_tool_answers_token_required(idle):
    want = rest(idle, None, "GET", "/api/v1/me").json()
    async with connect(idle) as client:  # the transport lets a tokenless request through
        for name in sorted(TOOLS):
            args = {"id": "x"} if name in WITH_ID else {}
            assert await call(client, name, args) == (True, want), name
        is_error, body = await call(client, "whoami", {"api_key": 42})
        assert is_error and body["error"] == "token_required" and body["message"].startswith("api_key:")


def _bad_tokens(core) -> dict[str, str]:
    revoked, expired = account(core), account(core)
    auth.revoke(core, _owner(core, revoked), revoked[:12])
    expiring = expired_token(core, _owner(core, expired), name="brief")
    return {"malformed": "dsk_nope", "unknown": UNKNOWN, "revoked": revoked, "expired": expiring}


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_bad_header_token_is_refused_at_the_transport(idle, mode):
    for kind, token in _bad_tokens(idle.core).items():
        rest_envelope = rest(idle, token, "GET", "/api/v1/me").json()
        with pytest.raises(BaseException) as caught:
            async with connect(idle, token, mode=mode):
                pass  # connecting is the first request; it must not get through
        error = caught.value
        while isinstance(error, BaseExceptionGroup):
            error = error.exceptions[0]
        assert isinstance(error, MCPError), (kind, error)
        # a JSON-RPC error naming token_required, with REST's message; not one of the SDK's codes
        assert error.error.message == f"token_required: {rest_envelope['message']}", kind
        assert error.error.data == rest_envelope and error.error.code == -31401


def test_a_bad_header_token_is_refused_even_with_a_good_api_key(idle):
    good = account(idle.core)
    request = {"jsonrpc": "2.0", "id": "call-1", "method": "tools/call",
               "params": {"name": "whoami", "arguments": {"api_key": good}}}
    r = httpx.post(mcp_url(idle), json=request, headers={"Authorization": f"Bearer {UNKNOWN}",
                                                         "accept": "application/json, text/event-stream"})
    assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer")
    body = r.json()
    assert body["id"] == "call-1" and body["error"]["data"]["error"] == "token_required"
    assert body["error"]["message"].startswith("token_required: the token is unknown")


@pytest.mark.anyio
async def test_the_schema_resource_needs_a_token_with_scenarios_read(idle):
    async with connect(idle) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource("svc://studio/scenario-schema")
    assert caught.value.error.message.startswith("token_required: ") and caught.value.error.code == -31401
    async with connect(idle, account(idle.core, scopes=("runs:read",))) as client:
        with pytest.raises(MCPError) as caught:
            await client.read_resource("svc://studio/scenario-schema")
    assert caught.value.error.data["error"] == "scope_required" and caught.value.error.code == -31403


@pytest.fixture
def strict(tmp_path):
    """A server whose per-address ceiling on refused requests is 3, on a clock the test sets: the
    window rolls on the wall-clock minute, and the test starts at the top of one."""
    core = Core.open(tmp_path / "data", refused_per_address_per_minute=3, clock=ManualClock(MINUTE_START + 1_000))
    accounts.create_account(core, "ok@example.org", plan="pro")
    port = free_port()
    server, thread = start_server(create_app(core=core), port)
    yield core, f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.mark.anyio
async def test_mcp_refusals_count_against_the_address_like_rest(strict):
    core, url = strict
    good, _ = auth.mint(core, "ok@example.org", scopes=("runs:read",))
    async with connect(url) as client:
        for _ in range(3):  # tool refusals (401) from 127.0.0.1
            assert (await call(client, "whoami"))[1]["error"] == "token_required"
        is_error, body = await call(client, "whoami")
        assert is_error and body["error"] == "rate_limited"
        # a refused scope (403) of a valid token is slowed too; its allowed calls are not
        assert (await call(client, "list_scenarios", {"api_key": good}))[1]["error"] == "rate_limited"
        assert not (await call(client, "list_runs", {"api_key": good}))[0]
    with httpx.Client(base_url=url) as c:
        assert c.get("/api/v1/me").status_code == 429  # REST sees the same address count
        r = c.post("/mcp/studio", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                   headers={"Authorization": f"Bearer {UNKNOWN}", "accept": "application/json"})
    assert r.status_code == 429 and "retry-after" in r.headers
    assert r.json()["error"]["data"]["error"] == "rate_limited" and r.json()["error"]["code"] == -31429


def _list(url: str, host: str, origin: str | None = None) -> int:
    headers = {"host": host, "accept": "application/json, text/event-stream"}
    if origin:
        headers["origin"] = origin
    return httpx.post(url + "/mcp/studio", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                      headers=headers).status_code


def test_dns_rebinding_protection_allows_only_the_configured_hosts(tmp_path):
    port = free_port()
    server, thread = start_server(create_app(tmp_path / "data", mcp_allowed_hosts=["127.0.0.1:*", "localhost:*"]),
                                  port)
    url = f"http://127.0.0.1:{port}"
    try:
        assert _list(url, f"127.0.0.1:{port}") == 200
        assert _list(url, f"localhost:{port}", origin=f"http://localhost:{port}") == 200
        assert _list(url, "evil.example") == 421
        assert _list(url, f"localhost:{port}", origin="http://evil.example") == 403
        assert httpx.get(url + "/api/v1", headers={"host": "evil.example"}).status_code == 200  # REST unaffected
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_without_configured_hosts_any_host_reaches_the_server(idle):
    # Off by default, deliberately (api/mcp/__init__.py): tools need an explicit token, and a deployment
    # reached by its public name must work before anyone lists that name.
    assert _list(idle.url, "studio.example.org") == 200
