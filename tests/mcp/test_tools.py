"""The tool list and every tool's answer: the REST body for the same call, as structured content and as
JSON text (docs/mcp.md). Runs here stay queued (the idle server has no dispatcher), which
keeps every answer stable between the MCP call and the REST call it is compared with."""
from __future__ import annotations

import base64

import httpx
import pytest

from orchestrator.runs.admission.body import RunBody
from orchestrator.scenarios import ScenarioBody, ScenarioPatch
from orchestrator.skills import SkillBody, SkillPatch
from tests.mcp.conftest import READ_ONLY, TOOLS, WITH_ID, call, connect, mcp_url, ok, rest
from tests.runs.conftest import account, local_body

DEFINITION = {"name": "Lean winter", "description": "half the food", "season_ticks": 120,
              "env": {"resources": {"food": {"max": 0.5, "regen": 0.5}}, "anchors": ["anchors-v1"]}}


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_list_tools_shows_every_tool_with_its_schema(idle, mode):
    async with connect(idle, mode=mode) as client:  # listing needs no token
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for name, tool in tools.items():
        schema = tool.input_schema
        assert schema["type"] == "object" and schema["properties"]["api_key"]["type"] == "string"
        assert ("id" in schema["properties"]) == (name in WITH_ID)
        assert ("id" in schema.get("required", [])) == (name in WITH_ID)
        assert len(tool.description) > 120, name  # enough for an agent to use it unaided
        assert tool.annotations.read_only_hint is (name in READ_ONLY), name
    # body tools advertise the REST body model's own schema (the one REST's OpenAPI document shows)
    for name, model in (("validate_scenario", ScenarioBody), ("create_scenario", ScenarioBody),
                        ("update_scenario", ScenarioPatch), ("create_skill", SkillBody), ("update_skill", SkillPatch),
                        ("estimate_run", RunBody), ("launch_run", RunBody)):
        want, got = model.model_json_schema(), tools[name].input_schema
        assert {k: v for k, v in got["properties"].items() if k not in ("id", "api_key")} == want["properties"]
        assert [r for r in got.get("required", []) if r != "id"] == want.get("required", [])
        assert got.get("$defs") == want.get("$defs") and got["additionalProperties"] is False
    assert set(tools["list_runs"].input_schema["properties"]) == {"status", "scenario_id", "batch_id", "limit",
                                                                   "cursor", "api_key"}
    launch, delete = tools["launch_run"].annotations, tools["delete_scenario"].annotations
    assert (launch.idempotent_hint, launch.destructive_hint, launch.open_world_hint) == (False, False, True)
    assert (delete.destructive_hint, delete.idempotent_hint) == (True, True)
    assert tools["create_scenario"].annotations.idempotent_hint is True  # same name and hash: same scenario


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_current_and_legacy_clients_get_the_same_answers(idle, mode):
    token = account(idle.core)
    async with connect(idle, token, mode=mode) as client:
        # auto negotiates the per-request protocol; legacy does the initialize handshake
        assert client.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
        assert await ok(client, "whoami") == rest(idle, token, "GET", "/api/v1/me").json()


def test_plain_post_lists_tools_without_a_session_or_redirect(idle):
    for path in ("/mcp/studio", "/mcp/studio/"):
        r = httpx.post(idle.url + path, json={"jsonrpc": "2.0", "id": 7, "method": "tools/list"},
                       headers={"accept": "application/json, text/event-stream"})
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
        assert "mcp-session-id" not in r.headers  # stateless: any worker can serve the next request
        assert r.json()["id"] == 7 and {t["name"] for t in r.json()["result"]["tools"]} == TOOLS
    r = httpx.get(mcp_url(idle))  # no session stream to open in stateless mode
    assert (r.status_code, r.headers["allow"], r.json()["error"]) == (405, "POST", "method_not_allowed")


def test_discovery_names_the_endpoint_and_openapi_leaves_it_out(idle):
    assert httpx.get(idle.url + "/api/v1").json()["mcp"] == mcp_url(idle)
    doc = httpx.get(idle.url + "/api/v1/openapi.json").json()
    assert not [p for p in doc["paths"] if p.startswith("/mcp")]


@pytest.mark.anyio
async def test_the_schema_resource_is_the_rest_schema(idle):
    token = account(idle.core)
    async with connect(idle, token) as client:
        listed = (await client.list_resources()).resources
        assert [str(r.uri) for r in listed] == ["svc://studio/scenario-schema"]
        content = (await client.read_resource("svc://studio/scenario-schema")).contents[0]
    assert content.mime_type == "application/schema+json"
    assert httpx.Response(200, content=content.text).json() == rest(idle, token, "GET",
                                                                     "/api/v1/scenarios/schema").json()


class Twin:
    """Calls a tool and its REST twin on the same server and account; records which tools ran."""

    def __init__(self, server, token, client):
        self.server, self.token, self.client, self.called = server, token, client, set()

    async def tool(self, name: str, args: dict | None = None) -> dict:
        self.called.add(name)
        return await ok(self.client, name, args)

    async def same(self, name: str, args: dict | None, method: str, path: str, body=None) -> dict:
        got = await self.tool(name, args)
        r = rest(self.server, self.token, method, path, body)
        assert r.status_code in (200, 201), r.json()
        assert got == r.json(), name
        return got

    def get(self, path: str) -> dict:
        r = rest(self.server, self.token, "GET", path)
        assert r.status_code == 200, r.json()
        return r.json()


@pytest.mark.anyio
async def test_every_tool_answers_the_rest_body(idle):
    token = account(idle.core)
    async with connect(idle, token) as client:
        t = Twin(idle, token, client)
        await t.same("whoami", {}, "GET", "/api/v1/me")
        await t.same("get_scenario_schema", {}, "GET", "/api/v1/scenarios/schema")
        await t.same("list_library", {}, "GET", "/api/v1/library/scenarios")
        await t.same("list_anchors", {}, "GET", "/api/v1/library/anchors")
        await t.same("validate_scenario", DEFINITION, "POST", "/api/v1/scenarios/validate", DEFINITION)

        created = await t.tool("create_scenario", DEFINITION)
        assert created["created"] is True
        again = rest(idle, token, "POST", "/api/v1/scenarios", DEFINITION)  # idempotent: the same scenario
        assert (again.status_code, again.json()) == (200, {**created, "created": False})
        sid = created["scenario"]["id"]
        await t.same("list_scenarios", {}, "GET", "/api/v1/scenarios")
        await t.same("get_scenario", {"id": sid}, "GET", f"/api/v1/scenarios/{sid}")
        updated = await t.tool("update_scenario", {"id": sid, "name": "Leaner winter", "season_ticks": 100})
        assert updated == t.get(f"/api/v1/scenarios/{sid}") and updated["scenario"]["updated_at_ms"]

        await t.same("list_skills", {}, "GET", "/api/v1/skills")
        await t.same("get_skill", {"id": "builtin:trader"}, "GET", "/api/v1/skills/builtin:trader")
        skill = await t.tool("create_skill", {"name": "Patient", "text": "Trade only when the offer is fair."})
        kid = skill["skill"]["id"]
        assert skill == {"ok": True, **t.get(f"/api/v1/skills/{kid}")}
        assert await t.tool("update_skill", {"id": kid, "text": "Never raid first."}) == t.get(f"/api/v1/skills/{kid}")

        body = local_body(scenario_id=sid, roster=[{"model": "local/honest-trader", "skills": [kid]},
                                                   {"model": "local/random"}])
        await t.same("estimate_run", body, "POST", "/api/v1/runs/estimate", body)
        launched = await t.tool("launch_run", body)
        rid = launched["run"]["run_id"]
        assert launched["batch"] is None and launched["run"] == t.get(f"/api/v1/runs/{rid}")["run"]
        await t.same("get_run", {"id": rid}, "GET", f"/api/v1/runs/{rid}")
        transcript = await t.same("get_transcript", {"id": rid, "seat": 1, "limit": 5}, "GET",
                                  f"/api/v1/runs/{rid}/transcript?seat=1&limit=5")
        assert transcript == {"turns": [], "next_cursor": None}  # queued, and scripted seats: no model turns
        graded = await t.same("get_decisions", {"id": rid, "seat": 1, "limit": 5}, "GET",
                              f"/api/v1/runs/{rid}/decisions?seat=1&limit=5")
        assert (graded["status"], graded["turns"]) == (None, [])  # auto: local seats are not graded
        series = await t.tool("launch_run", {**body, "trials": 2})
        bid = series["batch"]["batch_id"]
        await t.same("get_batch", {"id": bid}, "GET", f"/api/v1/batches/{bid}")
        await t.same("get_leaderboard", {"scenario_id": sid}, "GET", f"/api/v1/leaderboard?scenario_id={sid}")
        exported = await t.tool("export_batch", {"id": bid})
        assert exported["csv"] == rest(idle, token, "GET", f"/api/v1/batches/{bid}/export").text
        as_file = await t.tool("export_run", {"id": bid, "format": "csv"})
        assert base64.b64decode(as_file["base64"]) == rest(idle, token, "GET", f"/api/v1/batches/{bid}/export").content
        assert (as_file["filename"], as_file["size_bytes"]) == (f"{bid}.csv", len(base64.b64decode(as_file["base64"])))
        t.called.add("fork_run")  # nothing played on this idle server: forking a queued run refuses alike
        refused = await call(client, "fork_run", {"run_id": rid, "tick": 3, "seats": {"0": {"model": "local/random"}}})
        r = rest(idle, token, "POST", "/api/v1/runs", {"fork": {"run_id": rid, "tick": 3,
                                                                "seats": {"0": {"model": "local/random"}}}})
        assert refused == (True, r.json()) and r.status_code == 400 and r.json()["error"] == "bad_fork"
        t.called.add("compare_batches")  # nothing played on this idle server: both refuse alike
        refused = await call(client, "compare_batches", {"batch_a": bid, "batch_b": bid})
        r = rest(idle, token, "GET", f"/api/v1/compare?batch_a={bid}&batch_b={bid}")
        assert refused == (True, r.json()) and r.status_code == 400
        await t.same("list_runs", {"status": "queued", "limit": 2}, "GET", "/api/v1/runs?status=queued&limit=2")
        page = await t.tool("list_runs", {"batch_id": bid, "limit": 1})
        assert page == t.get(f"/api/v1/runs?batch_id={bid}&limit=1") and page["next_cursor"]

        agent = (await t.tool("launch_run", {"scenario_id": "svc:custom-base-v1", "season_ticks": 10, "roster": [
            {"provider": "agent", "model": "twin-agent"}, {"model": "local/random"}]}))["run"]["run_id"]
        turn = await t.same("get_seat_turn", {"run_id": agent, "seat": 0}, "GET", f"/api/v1/runs/{agent}/seats/0/turn")
        assert turn["status"] == "waiting"  # queued: nobody plays runs on this server
        t.called.add("submit_seat_actions")
        answer = {"tick": 0, "actions": [{"action": "wait"}]}
        r = rest(idle, token, "POST", f"/api/v1/runs/{agent}/seats/0/actions", answer)
        assert await call(client, "submit_seat_actions", {"run_id": agent, "seat": 0, **answer}) == (True, r.json())
        assert r.status_code == 409 and r.json()["error"] == "turn_closed"
        for args, path in (({"run_id": agent, "seat": 1}, f"/api/v1/runs/{agent}/seats/1/turn"),
                           ({"run_id": "run_nope", "seat": 0}, "/api/v1/runs/run_nope/seats/0/turn"),
                           ({"run_id": agent, "seat": 0, "wait_ms": 30001}, f"/api/v1/runs/{agent}/seats/0/turn?wait_ms=30001")):
            r = rest(idle, token, "GET", path)
            assert await call(client, "get_seat_turn", args) == (True, r.json()) and r.status_code in (400, 404)

        cancelled = await t.tool("cancel_run", {"id": rid})  # queued: cancelled at once
        assert cancelled["cancelled"] is True and cancelled["run"] == t.get(f"/api/v1/runs/{rid}")["run"]
        await t.same("cancel_run", {"id": rid}, "POST", f"/api/v1/runs/{rid}/cancel")  # terminal: unchanged
        await t.same("get_usage", {}, "GET", "/api/v1/usage")

        assert await t.tool("delete_skill", {"id": kid}) == {"ok": True, "deleted": kid}
        assert rest(idle, token, "GET", f"/api/v1/skills/{kid}").status_code == 404
        assert await t.tool("delete_scenario", {"id": sid}) == {"ok": True, "deleted": sid}
        assert rest(idle, token, "GET", f"/api/v1/scenarios/{sid}").status_code == 404
    assert t.called == TOOLS


@pytest.mark.anyio
async def test_tool_arguments_that_rest_has_no_place_for_are_refused(idle):
    async with connect(idle, account(idle.core)) as client:
        assert await call(client, "get_run", {}) == (True, {"error": "bad_request", "message": "id is required"})
        assert await call(client, "get_run", {"id": 5}) == (True, {"error": "bad_request",
                                                                  "message": "id: should be a string"})
        is_error, body = await call(client, "get_run", {"id": "run_x", "run_id": "run_x"})
        assert is_error and body == {"error": "bad_request",
                                     "message": "unknown argument 'run_id'; allowed arguments: id, api_key"}
        is_error, body = await call(client, "list_runs", {"cursor": 3})
        assert is_error and body["error"] == "bad_request" and body["message"].startswith("cursor:")
        # null stands for an omitted argument, as an absent query parameter
        assert (await call(client, "list_runs", {"status": None, "cursor": None}))[0] is False
