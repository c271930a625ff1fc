"""MCP refuses arena ids as REST does: arena games launch from the web console."""
import pytest

from tests.mcp.conftest import call, connect
from tests.runs.conftest import account


@pytest.mark.anyio
async def test_launch_and_estimate_refuse_arena_ids(idle):
    body = {"scenario_id": "arena:connect-four", "roster": [{"model": "local/solver"}, {"model": "local/random"}]}
    async with connect(idle, account(idle.core)) as client:
        for tool in ("launch_run", "estimate_run"):
            is_error, answer = await call(client, tool, body)
            assert is_error and answer["error"] == "bad_scenario" and "web console" in answer["message"]
