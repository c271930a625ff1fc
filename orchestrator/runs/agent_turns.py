"""An agent seat's turns, as its program (or a person in the console) reads and answers them
(docs/AGENTS.md). REST, MCP, the Python surface and the console call these two coroutines, so each
refusal has one code and one message. Both need runs:write (they play the run) and the run's owner.

The long-poll waits on the exchange actor from the caller's coroutine: no thread is held while it
waits, and the callers of one process waiting on one seat share one ask, so a crowd of them costs one
actor call and one wake-up each. A process that plays no runs has no exchange: its answers come from
the store alone (waiting, or ended).
"""
from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

from pydantic import Field

from orchestrator import finite
from orchestrator.agents import waits
from orchestrator.auth import Principal, require
from orchestrator.core import Core
from orchestrator.errors import DomainError
from orchestrator.records.roster import Seat
from orchestrator.statuses import QUEUED, TERMINAL
from orchestrator.runs.service import WRITE, run_row
from orchestrator.seats.prompt import compose_directions
from orchestrator.validation import StrictModel, integer_param, parse
from orchestrator.finite import INT_RANGE

MAX_WAIT_MS = 30_000
STORE_POLL_S = 0.5  # without an exchange here, how often a long-poll looks at the run's status


class SeatActions(StrictModel):
    """The body of POST /api/v1/runs/:id/seats/:seat/actions: the open turn's tick and the actions,
    each as a json-format model seat writes one (world `{action, ...}`; chess `{move}`, Connect Four
    `{column}`, or `{action: "resign"}`)."""
    tick: Annotated[int, Field(ge=0, le=INT_RANGE)]
    actions: Annotated[list[dict[str, Any]], Field(max_length=5)]


CODES = {"tick": "bad_request", "actions": "bad_actions"}
HINTS = {"tick": "send the tick of the seat's open turn (GET .../turn)",
         "actions": "send an array of action objects, at most actions_per_turn of them"}


def submitted_by(principal: Principal) -> str:
    """Who sent a turn's actions, for the transcript: an access token by its prefix, or a person signed
    in to the console by their handle."""
    if principal.token_id.startswith("console:"):
        return f"console:{principal.handle}"
    return f"token:{principal.token_prefix}"


def _agent_seat(row, seat: Any) -> tuple[int, Seat]:
    roster = row.roster
    try:
        index = integer_param(seat, "seat", 0, max(0, len(roster) - 1))
    except DomainError:
        index = None
    if index is None or index >= len(roster) or not roster[index].agent:
        agents = [str(s.seat) for s in roster if s.agent]
        raise DomainError("not_agent_seat", f"seat {str(seat)[:20]} of run {row.id} is not an agent seat; "
                          + (f"its agent seats: {', '.join(agents)}" if agents else "the run has no agent seat"))
    return index, roster[index]


def _exchange(core: Core):
    """The service's exchange: any head that may play runs reaches it, dispatching or not."""
    if core.agents is not None:
        return core.agents.handle()
    return None if core.dispatcher is None else core.dispatcher.agents.handle()


def _view(row, index: int, seat: Seat, status: str) -> dict:
    eff = row.effective
    played = row.live_tick
    return {"run_id": row.id, "seat": index, "status": status,
            "tick": (played - 1 if played else None) if status == "ended" else played,
            "season_ticks": eff["season_ticks"], "deadline_ms": None,
            # the world resolves actions_per_turn; an arena game takes one move a turn
            "actions_per_turn": eff["env"].get("actions_per_turn", 1), "observation": None,
            "directions": compose_directions([s.model_dump() for s in seat.skills], seat.instructions) or None}


async def get_turn(core: Core, principal: Principal, run_id: str, seat: Any, *, wait_ms: Any = None) -> dict:
    """The seat's turn: as soon as it opens, the run ends, or wait_ms (0..30000, default 0) passes."""
    require(principal, WRITE, write=True)
    row = run_row(core, principal, run_id)
    index, entry = _agent_seat(row, seat)
    wait = integer_param(wait_ms, "wait_ms", 0, MAX_WAIT_MS, default=0)
    if row.status in TERMINAL:
        return _view(row, index, entry, "ended")
    exchange = _exchange(core)
    if exchange is None:
        return await _from_store(core, principal, run_id, index, entry, wait)
    got = await waits.ask(exchange, run_id, index, wait)
    if got["status"] == "your_turn":  # the turn says all: the run plays, at that tick
        return {"run_id": row.id, "seat": index, "status": "your_turn", **{k: got[k] for k in (
            "tick", "season_ticks", "deadline_ms", "actions_per_turn", "observation", "directions")}}
    row = run_row(core, principal, run_id)  # the live tick now, or the end the worker has just reported
    if got["status"] == "ended" or row.status in TERMINAL:
        view = _view(row, index, entry, "ended")
        if row.status not in TERMINAL:  # the match has ended; its run is being recorded
            view["tick"] = got.get("tick")
        return view
    return _view(row, index, entry, "waiting")


async def _from_store(core: Core, principal: Principal, run_id: str, index: int, entry: Seat, wait: int) -> dict:
    """No exchange in this process: no turn opens here, so wait for the run's end only."""
    loop = asyncio.get_running_loop()
    until = loop.time() + wait / 1000
    while True:
        row = run_row(core, principal, run_id)
        if row.status in TERMINAL:
            return _view(row, index, entry, "ended")
        left = until - loop.time()
        if left <= 0:
            return _view(row, index, entry, "waiting")
        await asyncio.sleep(min(STORE_POLL_S, left))


def read_actions(raw: Any, allowed: int) -> dict:
    """A submission's body checked: {tick, actions}, at most `allowed` actions, no text a run cannot hold
    (`parse` refuses it naming the field), and each action within the bounds `finite` sets for an
    action (finite numbers, depth, size); DomainError otherwise."""
    body = parse(SeatActions, raw, codes=CODES, hints=HINTS).model_dump()
    for k, action in enumerate(body["actions"]):  # each field of each action, as a model seat's is
        why = finite.action_unfit(action)
        if why is not None:
            raise DomainError("bad_actions", f"actions[{k}]: {why}; send an action as a json-format model seat "
                              "writes one: flat fields of text, finite numbers and true/false")
    if len(body["actions"]) > allowed:
        raise DomainError("bad_actions", f"actions: {len(body['actions'])} sent, but this run allows "
                          f"{allowed} per turn; send at most {allowed}")
    return body


async def submit_actions(core: Core, principal: Principal, run_id: str, seat: Any, raw: Any) -> dict:
    """Hand the seat's actions for its open turn to the match: {ok, tick, received}. The engine judges
    them when the tick plays; refusals show in the next observation and in the transcript."""
    require(principal, WRITE, write=True)
    row = run_row(core, principal, run_id)
    index, _ = _agent_seat(row, seat)
    body = read_actions(raw, row.effective["env"].get("actions_per_turn", 1))
    if row.status in TERMINAL:
        raise DomainError("turn_closed", f"tick {body['tick']} is not open: the run has ended ({row.status}); "
                          "no turn is open")
    exchange = _exchange(core)
    if exchange is None or row.status == QUEUED:
        why = "the run is queued" if row.status == QUEUED else "this process plays no runs"
        raise DomainError("turn_closed", f"tick {body['tick']} is not open: no turn of this seat is open ({why}); "
                          "ask for the turn with wait_ms and answer it when it opens")
    reply = json.dumps(raw, ensure_ascii=False, separators=(",", ":"))
    got = await exchange.submit.remote(run_id, index, body["tick"], body["actions"], reply, submitted_by(principal))
    if "closed" in got:
        raise DomainError("turn_closed", got["closed"])
    return got
