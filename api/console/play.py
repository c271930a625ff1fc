"""A person plays an agent seat in the browser (CONTRACT.md section 13): the page, and the two calls its
script makes, which await the same coroutines as GET .../turn and POST .../actions under /api/v1. The
turn's long-poll awaits the core on the event loop, so a page waiting for its turn holds no thread; a
submission is recorded with `submitted_by: "console:<handle>"` because the console's principal says so.

The page's script sends JSON (the REST body, parsed by the API's own body reader) with the session's
CSRF token in a header, where the console's HTML forms carry it in a field."""
from __future__ import annotations

import asyncio

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from api.console.pages import ConsoleUser, dead_end
from api.replay_html import TERRAIN_COLORS
from api.deps import BodyDep
from api.errors import envelope
from engine.arena.games import GAMES
from engine.kernels.codes import RESOURCES, TERRAINS
from engine.observe import GLYPHS
from engine.rules import TERRAIN_RES
from orchestrator import console_auth
from orchestrator.runs import agent_turns as turns
from orchestrator.errors import DomainError
from orchestrator.runs import service as runs_service
from orchestrator.runs.pages import arena as arena_pages
from orchestrator.seats.actions import tool_specs

router = APIRouter(include_in_schema=False)
CSRF_HEADER = "x-csrf-token"
FIRST_TURN_S = 1.0


def world_actions() -> list[dict]:
    """The world's action kinds and their fields, for the form: each field as a select (a fixed set of
    values), a number or a text, optional where the engine takes it so."""
    out = []
    for spec in tool_specs():
        params = spec["parameters"]
        fields = [{"name": name, "description": p["description"], "options": p.get("enum"),
                   "kind": "number" if p["type"] == "integer" else "text", "max_length": p.get("maxLength"),
                   "required": name in params["required"]}
                  for name, p in params["properties"].items()]
        out.append({"name": spec["name"], "description": spec["description"], "fields": fields})
    return out


def terrain_legend() -> list[dict]:
    """The map's key for the play page, as the replay colours it: each terrain's glyph, its name, the
    goods gathered there (water: none, it blocks), and its colour."""
    goods = {t: (RESOURCES[r] if r >= 0 and t != "water" else None) for t, r in zip(TERRAINS, TERRAIN_RES)}
    return [{"glyph": g, "terrain": t.replace("_", " "), "goods": goods[t], "color": TERRAIN_COLORS[g]}
            for t, g in GLYPHS.items()]


def _board(scenario_id: str) -> str | None:
    game = GAMES.get(scenario_id)
    return game.board if game else None


async def _first_turn(user, run_id: str, seat: str) -> dict | None:
    """The turn as the page opens, through the turn's own checks (the run on this account, the seat an
    agent seat), which come before any wait. The exchange that holds the turns may still be starting
    (a server's first agent run): then None, the page opens as waiting and its script asks on."""
    asked = asyncio.ensure_future(turns.get_turn(user.core, user.principal, run_id, seat))
    done, _ = await asyncio.wait({asked}, timeout=FIRST_TURN_S)
    if done:
        return asked.result()
    asked.cancel()
    return None


@router.get("/console/runs/{run_id}/seats/{seat}")
async def play_page(user: ConsoleUser, run_id: str, seat: str):
    try:
        turn = await _first_turn(user, run_id, seat)
        got = runs_service.get_run(user.core, user.principal, run_id)
    except DomainError as e:
        return dead_end(user, e)
    run = got["run"]
    board = _board(run["scenario_id"])
    index = int(seat)  # an agent seat's index, as the checks found
    return user.page("play.html", run=run, seat=index, entry=run["roster"][index], turn=turn, board=board,
                     actions_per_turn=run["effective"]["env"].get("actions_per_turn", 1),
                     actions=None if board else world_actions(), terrain=None if board else terrain_legend())


@router.get("/console/runs/{run_id}/seats/{seat}/turn")
async def play_turn(user: ConsoleUser, run_id: str, seat: str, wait_ms: str | None = None):
    try:
        return await turns.get_turn(user.core, user.principal, run_id, seat, wait_ms=wait_ms)
    except DomainError as e:
        return envelope(e)


@router.post("/console/runs/{run_id}/seats/{seat}/actions")
async def play_submit(user: ConsoleUser, run_id: str, seat: str, raw: BodyDep) -> JSONResponse:
    try:
        console_auth.check_csrf(user.session, user.request.headers.get(CSRF_HEADER))
        return JSONResponse(await turns.submit_actions(user.core, user.principal, run_id, seat, raw))
    except DomainError as e:
        return envelope(e)


@router.get("/console/runs/{run_id}/seats/{seat}/result")
async def play_result(user: ConsoleUser, run_id: str, seat: int):
    """The run's outcome for the play page once the seat's turns have ended: this seat's scorecard
    (and the game's result), or that the results are still being recorded."""
    try:
        got = runs_service.get_run(user.core, user.principal, run_id)
    except DomainError as e:
        return dead_end(user, e)
    results = got["results"]
    mine = next((a for a in (results or {}).get("agents", []) if a.get("seat") == seat), None)
    final = _final_position(user, got["run"], seat) if results and results.get("game") else None
    return user.page("play_result.html", run=got["run"], results=results, mine=mine, final=final)


def _final_position(user, run: dict, seat: int) -> dict | None:
    """A finished game's last position, in the shape of the seat's observation state, so the page draws
    the board the game ended on (a seat's last turn shows the position before its opponent's last move).
    None until the graded moves are archived."""
    if not run["match_id"]:
        return None
    got = arena_pages.frames(user.core, run["match_id"])
    if not got["moves"]:
        return None
    first = run["effective"].get("first_seat", 0)
    mover = (seat - first) % 2  # 0: this seat moved first
    if run["scenario_id"] == "arena:chess":
        return {"you": ("white", "black")[mover], "fen": got["frames"][-1], "legal_uci": [],
                "moves_uci": [m["uci"] for m in got["moves"]]}
    return {"you": ("X", "O")[mover], "grid": got["frames"][-1], "playable_columns": [],
            "moves": [m["column"] for m in got["moves"]]}
