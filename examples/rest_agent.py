"""An agent seat played over plain REST, standard library only (docs/AGENTS.md).

Launch a run with a seat {"provider": "agent", "model": "<your label>"}, then:

    STUDIO_URL=http://127.0.0.1:8000 STUDIO_TOKEN=dsk_... python examples/rest_agent.py RUN_ID SEAT

The loop: ask for the seat's turn (a long-poll), answer it before its deadline, until the run ends.
`policy` is the agent: swap in your own (a model call, a planner, a framework's agent).
"""
import json
import os
import random
import sys
import urllib.error
import urllib.request

URL = os.environ.get("STUDIO_URL", "http://127.0.0.1:8000")
TOKEN = os.environ["STUDIO_TOKEN"]  # a token with runs:write


def call(method: str, path: str, body: dict | None = None) -> dict:
    request = urllib.request.Request(URL + path, method=method, data=body and json.dumps(body).encode(),
                                     headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return json.load(answer)
    except urllib.error.HTTPError as refused:  # every refusal is {error, message}
        return json.load(refused)


def policy(turn: dict) -> list[dict]:
    """Gather where something grows under you, else walk somewhere."""
    state = turn["observation"]["state"]
    you = state["you"]
    if any(t["x"] == you["x"] and t["y"] == you["y"] for t in state["resources"]):
        return [{"action": "gather"}]
    return [{"action": "move", "direction": random.choice(["north", "south", "east", "west"])}]


def play(run_id: str, seat: int) -> dict:
    while True:
        turn = call("GET", f"/api/v1/runs/{run_id}/seats/{seat}/turn?wait_ms=20000")
        if "error" in turn:
            raise SystemExit(f"{turn['error']}: {turn['message']}")
        if turn["status"] == "ended":
            return turn
        if turn["status"] == "your_turn":
            ack = call("POST", f"/api/v1/runs/{run_id}/seats/{seat}/actions",
                       {"tick": turn["tick"], "actions": policy(turn)})
            if "error" in ack and ack["error"] != "turn_closed":  # turn_closed: too late, the tick played
                raise SystemExit(f"{ack['error']}: {ack['message']}")


if __name__ == "__main__":
    print(json.dumps(play(sys.argv[1], int(sys.argv[2]))))
