"""The `scenario_studio/world` task: a run on a Studio service whose `inspect` seats are agent seats
(docs/AGENTS.md) played by Inspect's model, over the service's REST turn endpoints.

Each `inspect` seat of the roster is one sample; an epoch is one run (trial), launched by the first of
its samples to start and shared by the others. A seat is told and shown what a model seat is, and
answers with tool calls from the model seats' action schema; a reply in text is read as a json-format
seat's. Its score is its scorecard in the run's results (fitness_index, the dimensions as metadata).
STUDIO_URL (default http://127.0.0.1:8000) and STUDIO_TOKEN (runs:write) name the service and the token.
"""
from __future__ import annotations

import asyncio
import json
import os

import httpx
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageTool, ChatMessageUser, get_model
from inspect_ai.scorer import Score, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import ToolInfo

from orchestrator.provider_kinds import AGENT
from orchestrator.seats.actions import Refused, from_call, from_text, tool_specs
from orchestrator.seats.memory import Memory
from orchestrator.seats.prompt import system_prompt
from orchestrator.statuses import FAILED

INSPECT_SEAT = "inspect"
WAIT_MS = 10_000  # the turn endpoint's long-poll
RESULTS_WAIT_S = 120.0


def _roster(seats: str | list[str], model: str) -> list[dict]:
    """`seats`: comma-separated (Inspect's -T reads a comma list as a list); `inspect` is a seat
    Inspect's model plays, anything else a roster model the service plays (local/random, ...)."""
    out = []
    for k, entry in enumerate(s.strip() for s in (seats.split(",") if isinstance(seats, str) else seats)):
        if entry == INSPECT_SEAT:
            out.append({"provider": "agent", "model": f"inspect {model}"[:80], "name": f"inspect-{k}"})
        elif entry:
            out.append({"model": entry})
    return out


class Service:
    """The Studio service's REST API, and the runs this task launched (one per epoch)."""

    def __init__(self, body: dict, seats: str):
        self.url = os.environ.get("STUDIO_URL", "http://127.0.0.1:8000").rstrip("/")
        self.token = os.environ.get("STUDIO_TOKEN")
        if not self.token:
            raise RuntimeError("scenario_studio/world needs STUDIO_TOKEN (a token with runs:write)")
        self.body, self.seats = body, seats
        self.runs: dict[int, asyncio.Future] = {}

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.url, headers={"Authorization": f"Bearer {self.token}"},
                                 timeout=WAIT_MS / 1000 + 30)

    async def run_for(self, epoch: int, http: httpx.AsyncClient) -> str:
        """The run of this epoch, launched by whichever sample asks first."""
        if epoch not in self.runs:
            self.runs[epoch] = asyncio.ensure_future(self._launch(http, epoch))
        return await self.runs[epoch]

    async def _launch(self, http: httpx.AsyncClient, epoch: int) -> str:
        # the agent seats' label names the model Inspect plays them with, known once the eval runs
        body = {**self.body, "roster": _roster(self.seats, str(get_model())), "name": f"{self.body['name']} #{epoch}"}
        r = await http.post("/api/v1/runs", json=body)
        if r.status_code != 201:
            raise RuntimeError(f"the service refused the run: {r.status_code} {r.text}")
        return r.json()["run"]["run_id"]


def _reply_actions(message) -> tuple[list[dict], list[ChatMessageTool]]:
    """The actions of one reply, and the tool messages that answer its calls."""
    tools, read = [], []
    if message.tool_calls:
        for call in message.tool_calls:
            got = from_call(call.function, call.arguments)
            read.append(got)
            note = got.transcript() if isinstance(got, Refused) else "sent; the engine judges it when the tick plays"
            tools.append(ChatMessageTool(content=note, tool_call_id=call.id, function=call.function))
    else:
        read = from_text(message.text or "")
    return [a for a in read if not isinstance(a, Refused)], tools


@solver
def play_seat(service: Service):
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        seat = state.metadata["seat"]
        state.messages = []  # the seat's own conversation, not the sample's input
        model = get_model()
        tools = [ToolInfo.model_validate(t) for t in tool_specs()]
        async with service.client() as http:
            run_id = await service.run_for(state.epoch, http)
            state.metadata["run_id"] = run_id
            turns = Memory()  # each turn's messages, bounded as a model seat's memory is
            while True:
                r = await http.get(f"/api/v1/runs/{run_id}/seats/{seat}/turn", params={"wait_ms": WAIT_MS})
                r.raise_for_status()
                turn = r.json()
                if turn["status"] == "ended":
                    break
                if turn["status"] != "your_turn":
                    continue
                if not state.messages:
                    state.messages.append(ChatMessageSystem(content=system_prompt("tools", turn["directions"] or "")))
                shown = ChatMessageUser(content=turn["observation"]["text"])
                memory = [m for t in turns for m in t]
                output = await model.generate([state.messages[0], *memory, shown], tools=tools)
                actions, answered = _reply_actions(output.message)
                actions = actions[: turn["actions_per_turn"]]
                posted = await http.post(f"/api/v1/runs/{run_id}/seats/{seat}/actions",
                                         json={"tick": turn["tick"], "actions": actions})
                if posted.status_code == 409:  # turn_closed: the deadline passed while the model thought
                    continue
                posted.raise_for_status()
                turns.append([shown, output.message, *answered])
                state.messages.extend([shown, output.message, *answered])
                state.output = output
            state.store.set("results", await _results(http, run_id))
        return state
    return solve


async def _results(http: httpx.AsyncClient, run_id: str) -> dict | None:
    """The run's results once its match archives (seconds after it ends); None for a run that failed."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + RESULTS_WAIT_S
    while loop.time() < deadline:
        body = (await http.get(f"/api/v1/runs/{run_id}")).json()
        if body["results"] is not None or body["run"]["status"] == FAILED:
            return body["results"]
        await asyncio.sleep(0.5)
    return None


@scorer(metrics=[mean(), stderr()])
def scorecard():
    """The seat's fitness_index (0..100) from the run's results, its dimensions and rank as metadata."""
    async def score(state: TaskState, target: Target) -> Score:
        results = state.store.get("results")
        agent = next((a for a in (results or {}).get("agents", []) if a["seat"] == state.metadata["seat"]), None)
        if agent is None:
            return Score(value=0.0, explanation="the run has no results for this seat (it failed or never ended)",
                         metadata={"run_id": state.metadata.get("run_id")})
        return Score(value=agent["fitness_index"], answer=agent["grade"], explanation=agent["epilogue"],
                     metadata={"run_id": state.metadata.get("run_id"), "rank": agent["rank"],
                               "dimensions": agent["dimensions"], "decisions": agent.get("decisions")})
    return score


def world(scenario: str = "svc:custom-base-v1", seats: str | list[str] = "inspect,local/random", season_ticks: int | None = None,
          env: str | None = None, name: str = "inspect eval") -> Task:
    """scenario: a library id or a saved usc_... id; seats: the roster (see _roster); season_ticks:
    the season's length (default: the scenario's); env: per-run env overrides as JSON
    ({"turn_timeout_ms": 60000, ...}); name: the runs' name."""
    inspect_seats = [k for k, s in enumerate(_roster(seats, "")) if s.get("provider") == AGENT]
    if not inspect_seats:
        raise ValueError(f"seats: name at least one '{INSPECT_SEAT}' seat, e.g. inspect,local/random")
    body = {"scenario_id": scenario, "name": name[:70]}
    if season_ticks is not None:
        body["season_ticks"] = int(season_ticks)
    if env:
        body["env"] = json.loads(env) if isinstance(env, str) else env
    dataset = MemoryDataset([Sample(id=f"seat-{k}", input=f"Play seat {k} of {scenario}", metadata={"seat": k})
                             for k in inspect_seats], name=scenario)
    return Task(dataset=dataset, solver=play_seat(Service(body, seats)), scorer=scorecard())


# Inspect namespaces a task by the top package of the module that defines it (here api, an import name
# of this project that means nothing to an Inspect user). A module it cannot resolve leaves the name as
# given, so the task is registered under the name users type, whether the project is installed
# editable or not.
world.__module__ = "scenario_studio"
world = task(name="scenario_studio/world")(world)
