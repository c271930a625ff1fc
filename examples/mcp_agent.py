"""An agent seat played over MCP with the official `mcp` client (docs/AGENTS.md): the same loop as
rest_agent.py through the tools get_seat_turn and submit_seat_actions.

    STUDIO_URL=http://127.0.0.1:8000 STUDIO_TOKEN=dsk_... python examples/mcp_agent.py RUN_ID SEAT

An LLM agent that already speaks MCP can call the same two tools itself.
"""
import asyncio
import json
import os
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

URL = os.environ.get("STUDIO_URL", "http://127.0.0.1:8000")
TOKEN = os.environ["STUDIO_TOKEN"]  # a token with runs:write


def policy(turn: dict) -> list[dict]:
    """Eat when hungry and holding food, else gather and walk on."""
    you = turn["observation"]["state"]["you"]
    if you["satiety"] < 40 and you["inventory"]["food"] > 0:
        return [{"action": "eat"}]
    return [{"action": "gather"}, {"action": "move", "direction": "east"}][: turn["actions_per_turn"]]


async def tool(client: Client, name: str, args: dict) -> dict:
    result = await client.call_tool(name, args)
    body = json.loads(result.content[0].text)  # also result.structured_content
    if result.is_error and body["error"] != "turn_closed":  # turn_closed: too late, the tick played
        raise SystemExit(f"{body['error']}: {body['message']}")
    return body


async def play(run_id: str, seat: int) -> dict:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as http:
        async with Client(streamable_http_client(f"{URL}/mcp/studio", http_client=http)) as client:
            while True:
                turn = await tool(client, "get_seat_turn", {"run_id": run_id, "seat": seat, "wait_ms": 20000})
                if turn["status"] == "ended":
                    return turn
                if turn["status"] == "your_turn":
                    await tool(client, "submit_seat_actions", {"run_id": run_id, "seat": seat, "tick": turn["tick"],
                                                               "actions": policy(turn)})


if __name__ == "__main__":
    print(json.dumps(asyncio.run(play(sys.argv[1], int(sys.argv[2])))))
