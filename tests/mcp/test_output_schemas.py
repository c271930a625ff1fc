"""Every tool lists an output schema, and real results of every tool, on a server that plays runs,
validate against it: the official client checks each result itself (a mismatch raises), and so does
this test with jsonschema. Input schemas use plain types, which the MCP Inspector reads without a
warning."""
from __future__ import annotations

import time

import anyio
import pytest
from jsonschema import Draft202012Validator

from engine.rubric import RUBRIC_VERSION
from orchestrator import auth
from orchestrator.seats import keys
from orchestrator.accounts import create_account
from orchestrator.runs import service
from tests.mcp.conftest import TOOLS, connect, ok
from tests.seats.fake_provider import FakeProvider

WORLD = "svc:custom-base-v1"
SCRIPTED = [{"model": "local/honest-trader"}, {"model": "local/aggressive-raider"}]
TERMINAL = ("finished", "failed", "cancelled")


def _types(node):
    """Every `type` keyword's value in a schema."""
    if isinstance(node, dict):
        if "type" in node and not isinstance(node["type"], dict):
            yield node["type"]
        for value in node.values():
            yield from _types(value)
    elif isinstance(node, list):
        for value in node:
            yield from _types(value)


@pytest.mark.anyio
async def test_every_tool_lists_an_object_output_schema_and_plain_input_types(idle):
    async with connect(idle) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for name, tool in tools.items():
        assert tool.output_schema is not None and tool.output_schema["type"] == "object", name
        Draft202012Validator.check_schema(tool.output_schema)
        assert all(isinstance(t, str) for t in _types(tool.input_schema)), name  # never ["string", "null"]
    for name in ("list_runs", "get_transcript"):
        cursor = tools[name].input_schema["properties"]["cursor"]
        assert cursor["type"] == "string" and "cursor" not in tools[name].input_schema.get("required", [])


@pytest.fixture
def fake():
    with FakeProvider() as server:
        server.defaults["openai/gpt-4o-mini"] = {"calls": [("move", {"direction": "north"})], "usage": (100, 20)}
        yield server


async def _ended(client, run_id: str) -> dict:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        body = await ok(client, "get_run", {"id": run_id})
        if body["run"]["status"] in TERMINAL:
            return body
        await anyio.sleep(0.1)
    raise AssertionError(f"run {run_id} did not end")


@pytest.mark.anyio
async def test_real_results_of_every_tool_hold_to_its_output_schema(playing, fake):
    email = f"outputs-{time.time_ns()}@example.com"
    create_account(playing.core, email, plan="lab", verified=True)
    keys.set_key(playing.core, provider="router", key="k-router", email=email, base_url=fake.url + "/v1")
    token, _ = auth.mint(playing.core, email, scopes=auth.SCOPES)
    results: dict[str, list[dict]] = {}
    async with connect(playing, token) as client:
        schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}

        async def tool(name: str, args: dict | None = None) -> dict:
            body = await ok(client, name, args)  # the client has checked it against the output schema
            results.setdefault(name, []).append(body)
            return body

        for name in ("whoami", "get_scenario_schema", "list_library", "list_anchors", "list_skills", "get_usage"):
            await tool(name)
        await tool("validate_scenario", {"name": "Pinned", "env": {"seed": 1, "spawn_seed": 2}})
        scenario = (await tool("create_scenario", {"name": "Outputs", "season_ticks": 20,
                                                   "env": {"anchors": []}}))["scenario"]
        await tool("get_scenario", {"id": scenario["id"]})
        await tool("update_scenario", {"id": scenario["id"], "description": "typed results"})
        await tool("list_scenarios")
        skill = (await tool("create_skill", {"name": "Hoarder", "text": "Keep every relic you find."}))["skill"]
        await tool("get_skill", {"id": "builtin:trader"})
        await tool("update_skill", {"id": skill["id"], "text": "Sell every relic at once."})

        model = {"scenario_id": WORLD, "season_ticks": 10, "roster": [
            {"model": "openai/gpt-4o-mini", "skills": [skill["id"]]}, {"model": "local/greedy-harvester"}]}
        await tool("estimate_run", model)
        run = (await tool("launch_run", model))["run"]
        series = {"scenario_id": scenario["id"], "roster": SCRIPTED, "trials": 2}
        a = (await tool("launch_run", series))["batch"]
        b = (await tool("launch_run", {**series, "paired_with": a["batch_id"]}))["batch"]
        core = playing.app.state.core
        arena = service.arena_launch(core, auth.authenticate(core, token), {
            "scenario_id": "arena:connect-four", "roster": [{"model": "local/solver"}, {"model": "local/random"}]})
        agent = (await tool("launch_run", {"scenario_id": WORLD, "season_ticks": 10, "roster": [
            {"provider": "agent", "model": "outputs-agent"}, {"model": "local/random"}]}))["run"]
        while True:  # an agent seat played to the end over the two turn tools
            turn = await tool("get_seat_turn", {"run_id": agent["run_id"], "seat": 0, "wait_ms": 5000})
            if turn["status"] == "ended":
                break
            if turn["status"] == "your_turn":
                await tool("submit_seat_actions", {"run_id": agent["run_id"], "seat": 0, "tick": turn["tick"],
                                                   "actions": [{"action": "gather"}]})
        for run_id in (run["run_id"], arena["run"]["run_id"], *a["run_ids"], *b["run_ids"], agent["run_id"]):
            results.setdefault("get_run", []).append(await _ended(client, run_id))
        fork = {"run_id": a["run_ids"][0], "tick": 5, "seats": {"0": {"model": "local/random"}}}
        await tool("estimate_run", {"fork": fork, "trials": 2})
        forked = (await tool("fork_run", {**fork, "trials": 2, "control": True}))["batch"]
        for run_id in forked["run_ids"]:  # effective.fork and results.fork
            results["get_run"].append(await _ended(client, run_id))
        assert (await tool("get_batch", {"id": forked["batch_id"]}))["batch"]["effect"]
        await tool("list_runs", {"limit": 2})
        await tool("get_transcript", {"id": run["run_id"], "limit": 3})
        deadline = time.monotonic() + 300  # the model seat's grading (auto), after the run ended
        while (await ok(client, "get_decisions", {"id": run["run_id"]}))["status"] != "done":
            assert time.monotonic() < deadline, "the grading did not finish"
            await anyio.sleep(0.2)
        await tool("get_decisions", {"id": run["run_id"], "limit": 3})
        results["get_run"].append(await ok(client, "get_run", {"id": run["run_id"]}))  # results with decisions
        await tool("cancel_run", {"id": run["run_id"]})
        await tool("get_batch", {"id": a["batch_id"]})
        await tool("get_leaderboard", {"scenario_id": scenario["id"], "resamples": 100})
        await tool("compare_batches", {"batch_a": a["batch_id"], "batch_b": b["batch_id"]})
        await tool("export_batch", {"id": a["batch_id"]})
        await tool("export_run", {"id": agent["run_id"]})
        await tool("delete_skill", {"id": skill["id"]})
        await tool("delete_scenario", {"id": scenario["id"]})
    assert set(results) == TOOLS
    assert results["get_transcript"][0]["turns"]  # a model seat's turns, not an empty page
    assert results["get_decisions"][0]["turns"]  # its graded decisions
    assert {r["results"]["rubric"] for r in results["get_run"]} >= {RUBRIC_VERSION, "arena-connect-four-1"}
    for name, bodies in results.items():
        validator = Draft202012Validator(schemas[name])
        for body in bodies:
            assert not list(validator.iter_errors(body)), (name, [e.message for e in validator.iter_errors(body)])
