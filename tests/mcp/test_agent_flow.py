"""An agent's session end to end, all through MCP on a server that plays runs with Ray: read the
schema, author and save a scenario, estimate, launch local seats, poll get_run to the end, read the
results; then a series and its summary."""
from __future__ import annotations

import httpx
import pytest

from tests.mcp.conftest import connect, ok, rest
from tests.runs.conftest import TERMINAL, account
from tests.waiting import until_async


async def poll_run(client, run_id: str, timeout: float = 60) -> dict:
    """What an agent does: get_run until the status is terminal and, once finished, results are in."""
    async def ended():
        got = await ok(client, "get_run", {"id": run_id})
        done = got["run"]["status"] in TERMINAL and (got["results"] is not None or got["run"]["status"] != "finished")
        return got if done else None
    return await until_async(ended, timeout, every=0.1, what=f"the end of run {run_id}")


@pytest.mark.anyio
async def test_an_agent_authors_launches_polls_and_reads_results(playing):
    token = account(playing.core)
    async with connect(playing, token) as client:
        me = await ok(client, "whoami")
        assert "runs:write" in me["token"]["scopes"] and me["limits"]["seats_per_run"] >= 2
        schema = await ok(client, "get_scenario_schema")
        definition = {"name": "Duel at dawn", "season_ticks": 80,
                      "env": {"seed": 11, "actions_per_turn": 2, "anchors": ["honest-trader", "random"],
                              "resources": {"food": {"max": 0.5}}}}
        assert set(definition) <= set(schema["properties"])
        checked = await ok(client, "validate_scenario", definition)
        assert checked["valid"] is True and checked["receipt"]["warnings"] == []
        created = await ok(client, "create_scenario", definition)
        scenario = created["scenario"]
        assert created["created"] is True and scenario["hash"] == checked["hash"]

        body = {"scenario_id": scenario["id"], "name": "mcp agent run",
                "roster": [{"model": "local/honest-trader", "name": "trader"},
                           {"model": "local/greedy-harvester", "skills": ["builtin:trader"]}]}
        estimate = (await ok(client, "estimate_run", body))["batch"]
        assert estimate["agent_turns"] == 2 * 80 and estimate["usd"] == {"low": 0.0, "high": 0.0}
        assert [s["funding"] for s in estimate["seats"]] == ["free", "free"]

        launched = await ok(client, "launch_run", body)
        run_id = launched["run"]["run_id"]
        got = await poll_run(client, run_id)
        run, results = got["run"], got["results"]
        assert run["status"] == "finished" and run["stop_reason"] == "season_end" and run["error"] is None
        assert run["effective"]["seed"] == 11 and run["effective"]["seed_source"] == "scenario"
        assert run["scenario_hash"] == scenario["hash"] and run["agent_turns"]["settled"] == 160
        assert results["match_ticks"] == 80 and results["field_size"] == 4  # two seats, two anchors
        assert {a["name"] for a in results["agents"]} == {"trader", "greedy-harvester"}
        assert all(0 <= a["fitness_index"] <= 100 for a in results["agents"])
        assert got == rest(playing, token, "GET", f"/api/v1/runs/{run_id}").json()  # the REST body
        report = httpx.get(playing.url + run["links"]["match"]).json()  # public page, no token
        assert report["results"] == results

        listed = await ok(client, "list_runs", {"scenario_id": scenario["id"]})
        assert [r["run_id"] for r in listed["runs"]] == [run_id]
        assert (await ok(client, "cancel_run", {"id": run_id}))["cancelled"] is False  # already finished

        launched = await ok(client, "launch_run", {**body, "season_ticks": 30, "trials": 2})
        batch_id = launched["batch"]["batch_id"]
        for rid in launched["batch"]["run_ids"]:
            assert (await poll_run(client, rid))["run"]["status"] == "finished"
        series = (await ok(client, "get_batch", {"id": batch_id}))["batch"]
        assert series["status"] == "finished" and series["trials"] == 2
        assert series["summary"] and series == rest(playing, token, "GET", f"/api/v1/batches/{batch_id}").json()["batch"]

        usage = await ok(client, "get_usage")
        assert usage["allowances"]["agent_turns"]["used"] == 160 + 2 * 2 * 30
