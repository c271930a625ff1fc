"""A model seat's transcript in the console: the owner's readable view of /api/v1/runs/:id/transcript,
one page of turns at a time, through the same service function."""
from __future__ import annotations

from fastapi import APIRouter, Request

from api.console.routes import _core, _page, _session
from orchestrator import console_auth
from orchestrator.errors import DomainError
from orchestrator.runs import service as runs_service
from orchestrator.runs.transcript import get_transcript

router = APIRouter(include_in_schema=False)


@router.get("/console/runs/{run_id}/transcript")
async def transcript_page(request: Request, run_id: str, seat: str | None = None, cursor: str | None = None):
    s = _session(request)
    core = _core(request)
    p = console_auth.principal(core, s)
    try:
        run = runs_service.get_run(core, p, run_id)["run"]
        got = get_transcript(core, p, run_id, seat=seat, cursor=cursor, limit="100")
    except DomainError as e:
        return _page(request, "error.html", s, status=e.status, error=e.message)
    return _page(request, "transcript.html", s, run=run, seat=None if seat is None else int(seat),
                 turns=got["turns"], next_cursor=got["next_cursor"])
