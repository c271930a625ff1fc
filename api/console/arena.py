"""The arena game picker (CONTRACT.md section 11): a game, two seats, trials; the estimate; launch.
It calls the service's arena_estimate / arena_launch: the same admission as every run, arena ids allowed."""
from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from api.console.pages import Console, ConsoleUser, estimate, launch, number, turn_timeout
from engine.arena.games import GAMES
from orchestrator.runs import service as runs_service
from orchestrator.runs.admission.admit import spend_cap
from orchestrator.runs.kinds.arena import TURN_TIMEOUT_MS

router = APIRouter(include_in_schema=False)


def _games() -> list[dict]:
    return [{"id": g.id, "name": g.title, "scripted": g.scripted, "models": g.models, "unavailable": g.unavailable()}
            for g in GAMES.values()]


def _body(form) -> dict:
    """The picker's fields -> a run body; empty fields are left out so the service's defaults apply."""
    body: dict = {"scenario_id": form.get("game", "")}
    for field in ("name", "trials", "max_spend_usd"):
        value = (form.get(field) or "").strip()
        if value:
            body[field] = value if field == "name" else number(value)
    roster = []
    for k in (0, 1):
        seat = {f: (form.get(f"seat{k}_{f}") or "").strip() for f in ("model", "provider", "format", "instructions")}
        if seat["model"]:
            roster.append({f: v for f, v in seat.items() if v})
    body["roster"] = roster
    return turn_timeout(form, body)


def _picker(user: Console, status: int = 200, **ctx) -> HTMLResponse:
    defaults = {"turn_timeout_ms": TURN_TIMEOUT_MS, "max_spend_usd": spend_cap(user.principal, None)}
    return user.page("arena.html", status=status, games=_games(), defaults=defaults, **ctx)


@router.get("/console/arena")
async def arena_page(user: ConsoleUser):
    return _picker(user)


@router.post("/console/arena/estimate")
async def arena_estimate(user: ConsoleUser):
    return await estimate(user, runs_service.arena_estimate, _body, score="accuracy")


@router.post("/console/arena")
async def arena_launch(user: ConsoleUser):
    return await launch(user, runs_service.arena_launch, _body, _picker)
