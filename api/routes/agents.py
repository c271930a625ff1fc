"""An agent seat's turns (docs/AGENTS.md): the long-poll for the open turn and the submission
of its actions. Both await the core's agent-turn coroutines on the event loop: a
waiting long-poll holds no thread."""
from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import JSONResponse

from api.deps import BodyDep, Caller, caller
from api.openapi import body, responses
from api.turn_schemas import ActionsReceived, SeatTurn
from orchestrator.runs import agent_turns as turns

router = APIRouter(prefix="/api/v1")
Player = Annotated[Caller, Depends(caller(turns.WRITE, write=True))]

# the seat reaches the core as sent, so a seat that is no agent seat's index reads not_agent_seat
Seat = Annotated[str, Path(description="the agent seat's roster index")]
TURN_PARAMS = {"parameters": [{
    "name": "wait_ms", "in": "query", "required": False,
    "schema": {"type": "integer", "minimum": 0, "maximum": turns.MAX_WAIT_MS},
    "description": "how long to wait for the turn to open (or the run to end); default 0 answers at once"}]}


@router.get("/runs/{id}/seats/{seat}/turn", responses=responses({200: SeatTurn}), openapi_extra=TURN_PARAMS,
            summary="An agent seat's turn: waits up to wait_ms for it to open")
async def get_turn(id: str, seat: Seat, c: Player, request: Request):
    # plain JSON already: encoded as it is, not walked by FastAPI's encoder first, since a turn that opens
    # answers every agent waiting on it at once
    return JSONResponse(await turns.get_turn(c.core, c.principal, id, seat,
                                             wait_ms=request.query_params.get("wait_ms")))


@router.post("/runs/{id}/seats/{seat}/actions", responses=responses({200: ActionsReceived}),
             openapi_extra=body(turns.SeatActions),
             summary="Answer an agent seat's open turn with its actions")
async def submit_actions(id: str, seat: Seat, c: Player, raw: BodyDep):
    return await turns.submit_actions(c.core, c.principal, id, seat, raw)
