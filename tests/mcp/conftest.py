"""MCP over real HTTP: the official `mcp` client against real uvicorn servers on 127.0.0.1.

Two servers: `idle` for the session (no dispatcher, so launched runs stay queued and refusals that
need a queued run are reachable) and `playing` for the modules that play runs (the dispatcher on a
local Ray; one for the package, each test on its own account). Both are tests/runs' servers; REST calls go to the same server for comparison.
"""
from __future__ import annotations

import json
from contextlib import asynccontextmanager

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.runs.conftest import Server, start

# docs/mcp.md
TOOLS = {"whoami", "get_scenario_schema", "validate_scenario", "create_scenario", "estimate_run", "launch_run",
         "get_usage", "list_skills", "get_skill", "create_skill", "update_skill", "delete_skill", "list_scenarios",
         "get_scenario", "update_scenario", "delete_scenario", "list_runs", "get_run", "cancel_run", "get_batch",
         "list_library", "list_anchors", "get_leaderboard", "compare_batches", "export_batch", "get_transcript",
         "get_seat_turn", "submit_seat_actions",  # docs/AGENTS.md
         "get_decisions",  # docs/RUBRIC.md
         "export_run",  # docs/FORMATS.md: a run or a series as a file
         "fork_run"}  # docs/FORKS.md
READ_ONLY = {"whoami", "get_scenario_schema", "validate_scenario", "estimate_run", "get_usage", "list_skills",
             "get_skill", "list_scenarios", "get_scenario", "list_runs", "get_run", "get_batch", "list_library",
             "list_anchors", "get_leaderboard", "compare_batches", "export_batch", "get_transcript", "get_decisions",
             "export_run"}
WITH_ID = {"get_scenario", "update_scenario", "delete_scenario", "get_skill", "update_skill", "delete_skill",
           "get_run", "cancel_run", "get_batch", "export_batch", "get_transcript", "get_decisions", "export_run"}

# Starter is squeezed so every allowance can be reached with one or two calls; lab and starter are
# lifted past their per-minute ceilings (tests send many calls), free keeps its 60 for rate_limited.
CONFIG = """
[plans.lab]
requests_per_minute = 1000000
[plans.starter]
requests_per_minute = 1000000
agent_turns_per_month = 1000
queued_runs = 1
saved_scenarios = 1
saved_skills = 1
[limits]
refused_per_address_per_minute = 1000000
"""


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="session")
def idle(tmp_path_factory) -> Server:
    s = start(tmp_path_factory.mktemp("mcp-idle") / "data", CONFIG, dispatch=False)
    yield s
    s.stop()


@pytest.fixture(scope="package")
def playing(tmp_path_factory, ray_pool) -> Server:
    s = start(tmp_path_factory.mktemp("mcp-playing") / "data", CONFIG, dispatch=True)
    yield s
    s.stop()


def mcp_url(server: Server | str) -> str:
    return f"{server if isinstance(server, str) else server.url}/mcp/studio"


@asynccontextmanager
async def connect(server: Server | str, token: str | None = None, *, mode: str = "auto", header: str = "bearer"):
    """An MCP client session on a server (or its base URL); the token goes in the Authorization (or
    x-api-key) header when given."""
    headers = {}
    if token is not None:
        headers = {"Authorization": f"Bearer {token}"} if header == "bearer" else {"x-api-key": token}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        async with Client(streamable_http_client(mcp_url(server), http_client=http), mode=mode) as client:
            yield client


async def call(client: Client, tool: str, args: dict | None = None) -> tuple[bool, dict]:
    """(is_error, body): the body parsed from the text content, which must equal the structured content."""
    result = await client.call_tool(tool, args or {})
    assert len(result.content) == 1 and result.content[0].type == "text"
    body = json.loads(result.content[0].text)
    assert result.structured_content == body
    return bool(result.is_error), body


async def ok(client: Client, tool: str, args: dict | None = None) -> dict:
    is_error, body = await call(client, tool, args)
    assert not is_error, (tool, body)
    return body


def rest(server: Server, token: str | None, method: str, path: str, body=None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with httpx.Client(base_url=server.url, headers=headers, timeout=60) as c:
        return c.request(method, path, json=body)

