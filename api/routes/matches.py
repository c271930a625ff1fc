"""Public match pages: no token, unlisted (the match id is the key)."""
from __future__ import annotations

from fastapi import APIRouter, Request
import asyncio
import json

from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, StreamingResponse

from api.arena_html import arena_page
from api.html import replay_html, report_html
from api.openapi import responses
from orchestrator.runs import arena_pages, pages
from orchestrator.runs.lifecycle import ACTIVE

router = APIRouter(prefix="/api/matches")


def _wants_html(request: Request, fmt: str | None) -> bool:
    if fmt is not None:
        return fmt == "html"
    return "text/html" in request.headers.get("accept", "")


_PAGE = {"type": "object"}


@router.get("/{id}/report", responses=responses({200: _PAGE}), summary="Match report (JSON, or HTML with Accept: text/html or ?format=html)",
            openapi_extra={"security": []})
def report(id: str, request: Request, format: str | None = None):
    core = request.app.state.core
    if arena_pages.is_arena(core, id):
        rep = arena_pages.report(core, id)
        return HTMLResponse(arena_page(rep, arena_pages.frames(core, id))) if _wants_html(request, format) else rep
    rep = pages.report(core, id)
    return HTMLResponse(report_html(rep)) if _wants_html(request, format) else rep


_TEXT = {**responses({}), 200: {"description": "OK", "content": {"text/plain": {"schema": {"type": "string"}}}},
         "4XX": {"description": "refused: {error, message}", "content": {"application/json": {
             "schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}}}}


@router.get("/{id}/log", response_class=PlainTextResponse, responses=_TEXT, summary="Play-by-play, tick by tick",
            openapi_extra={"security": []})
def log(id: str, request: Request) -> PlainTextResponse:
    if arena_pages.is_arena(request.app.state.core, id):  # arena games: the graded move list as JSON
        return JSONResponse(arena_pages.log(request.app.state.core, id))
    return PlainTextResponse(pages.log_text(request.app.state.core, id))


LIVE_EVERY_S = 1.0


@router.get("/{id}/live", responses={**responses({}), 200: {"description": "server-sent events", "content": {
    "text/event-stream": {"schema": {"type": "string"}}}}}, summary="Server-sent events while the match plays",
    openapi_extra={"security": []})
async def live(id: str, request: Request) -> StreamingResponse:
    """One event per tick played (`id:` the tick, so a client resumes), {status, tick, season_ticks};
    the last event carries the terminal status and the stream ends."""
    core = request.app.state.core
    pages.require_match(core, id)

    async def stream():
        last = None
        while True:
            now = await asyncio.to_thread(pages.progress, core, id)
            if (now["status"], now["tick"]) != last:
                last = (now["status"], now["tick"])
                yield f"id: {now['tick']}\nevent: progress\ndata: {json.dumps(now)}\n\n"
            if now["status"] not in ACTIVE or await request.is_disconnected():
                return
            await asyncio.sleep(LIVE_EVERY_S)
    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@router.get("/{id}/replay", responses=responses({200: _PAGE}), summary="Replay page (?format=json gives the frames)", openapi_extra={"security": []})
def replay(id: str, request: Request, format: str | None = None):
    core = request.app.state.core
    if arena_pages.is_arena(core, id):
        if format == "json":
            return arena_pages.frames(core, id)
        return HTMLResponse(arena_page(arena_pages.report(core, id), arena_pages.frames(core, id)))
    if format == "json":
        return pages.replay_frames(request.app.state.core, id)
    pages.require_match(request.app.state.core, id)
    return HTMLResponse(replay_html(id))
