"""Public match pages: no token, unlisted (the match id is the key)."""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from fastapi.sse import EventSourceResponse, ServerSentEvent

from api.arena_html import arena_log_page, arena_page, arena_replay_page
from api.html import report_html
from api.match_schemas import ArenaLog, ArenaReplay, ArenaReport, LiveProgress, Replay, Report
from api.openapi import TEXT, ref, responses
from api.replay_html import replay_html
from orchestrator import datadir
from orchestrator.runs.pages import arena as arena_pages, world as pages
from orchestrator.statuses import ACTIVE

router = APIRouter(prefix="/api/matches")


def _public(format_text: str | None = None) -> dict:
    """openapi_extra of a public page: no token, and the ?format= it takes, if any."""
    if format_text is None:
        return {"security": []}
    return {"security": [], "parameters": [{"name": "format", "in": "query", "required": False,
                                            "schema": {"enum": list(pages.PAGE_FORMATS)},
                                            "description": format_text}]}


def _wants_html(request: Request, fmt: str | None) -> bool:
    if fmt is not None:
        return fmt == "html"
    return "text/html" in request.headers.get("accept", "")


@router.get("/{id}/report", responses=responses({200: {"application/json": ref(Report, ArenaReport),
                                                       "text/html": TEXT}}),
            summary="Match report (JSON, or HTML with Accept: text/html or ?format=html)",
            openapi_extra=_public("json (the default) or html; without it, Accept: text/html asks for HTML"))
def report(id: str, request: Request):
    core, html = request.app.state.core, _wants_html(request, pages.page_format(request.query_params.get("format")))
    if arena_pages.is_arena(core, id):
        rep = arena_pages.report(core, id)
        return HTMLResponse(arena_page(rep, arena_pages.frames(core, id))) if html else rep
    rep = pages.report(core, id)
    return HTMLResponse(report_html(rep)) if html else rep


@router.get("/{id}/log", response_class=PlainTextResponse,
            responses=responses({200: {"text/plain": TEXT, "application/json": ref(ArenaLog), "text/html": TEXT}}),
            summary="Play-by-play, tick by tick (arena games: the graded move list, JSON or an HTML table)",
            openapi_extra=_public("arena games: json (the default) or html (the moves as a table); without it, "
                                  "Accept: text/html asks for HTML. A world match's play-by-play is always text"))
def log(id: str, request: Request) -> PlainTextResponse:
    core, fmt = request.app.state.core, pages.page_format(request.query_params.get("format"))
    if arena_pages.is_arena(core, id):
        if _wants_html(request, fmt):
            return HTMLResponse(arena_log_page(arena_pages.report(core, id)))
        return JSONResponse(arena_pages.log(core, id))
    return PlainTextResponse(pages.log_text(core, id))


PGN = "application/x-chess-pgn"


@router.get("/{id}/pgn", response_class=Response,
            # text/plain first: what a generated client reads it as (no generator knows the PGN type)
            responses=responses({200: {"text/plain": TEXT, PGN: TEXT}}),
            summary="A chess game as PGN: the seven tags, each move's [%eval], its label as a NAG, the oracle's "
                    "move as a variation (docs/FORMATS.md); other games answer not_found",
            openapi_extra=_public())
def pgn(id: str, request: Request) -> Response:
    # the configured address, never the request's Host header: the file is kept and passed on
    core = request.app.state.core
    site = datadir.base_url(core.data_dir, core.config) + request.app.url_path_for("report", id=id)
    text = arena_pages.pgn(core, id, site)
    return Response(text, media_type=PGN, headers={"content-disposition": f'attachment; filename="{id}.pgn"'})


LIVE_EVERY_S = 1.0


def _match(id: str, request: Request) -> str:
    """An unknown match is the 404 envelope, before the stream begins."""
    pages.require_match(request.app.state.core, id)
    return id


# The whole stream, as text, for clients that read it as a body; itemSchema (FastAPI's) types each event.
_STREAM = {"responses": {"200": {"description": "server-sent events", "content": {
    "text/event-stream": {"schema": {**TEXT, "description": "`event: progress`, `data:` a LiveProgress object "
                                     "as JSON, `id:` the tick (a client resumes from it)"}}}}}}


@router.get("/{id}/live", response_class=EventSourceResponse, responses=responses({}),
            summary="Server-sent events while the match plays", openapi_extra={**_public(), **_STREAM})
async def live(match_id: Annotated[str, Depends(_match)], request: Request) -> AsyncIterable[LiveProgress]:
    """One event per tick played (`id:` the tick, so a client resumes), {status, tick, season_ticks,
    frame}; the last event carries the terminal status and the stream ends."""
    core = request.app.state.core
    last = None
    while True:
        now = await asyncio.to_thread(pages.progress, core, match_id)
        if (now["status"], now["tick"]) != last:
            last = (now["status"], now["tick"])
            yield ServerSentEvent(data=now, event="progress", id=str(now["tick"]))
        if now["status"] not in ACTIVE or await request.is_disconnected():
            return
        await asyncio.sleep(LIVE_EVERY_S)


@router.get("/{id}/replay", responses=responses({200: {"application/json": ref(Replay, ArenaReplay),
                                                       "text/html": TEXT}}),
            summary="Replay page (HTML; ?format=json gives the frames)",
            openapi_extra=_public("html (the default: the page) or json (the frames)"))
def replay(id: str, request: Request):
    core, fmt = request.app.state.core, pages.page_format(request.query_params.get("format"))
    if arena_pages.is_arena(core, id):
        if fmt == "json":
            return JSONResponse(arena_pages.frames(core, id))
        return HTMLResponse(arena_replay_page(arena_pages.report(core, id), arena_pages.frames(core, id)))
    if fmt == "json":
        return JSONResponse(pages.replay_frames(core, id))
    pages.require_log(core, id)
    return HTMLResponse(replay_html(id))
