"""A model seat's transcript in the console: the owner's readable view of /api/v1/runs/:id/transcript,
one page of turns at a time, through the same service function."""
from __future__ import annotations

from fastapi import APIRouter

from api.console.pages import ConsoleUser, error_page, refused
from orchestrator.errors import DomainError
from orchestrator.runs import service as runs_service
from orchestrator.runs.transcript import get_transcript

router = APIRouter(include_in_schema=False)


@router.get("/console/runs/{run_id}/transcript")
async def transcript_page(user: ConsoleUser, run_id: str, seat: str | None = None, cursor: str | None = None):
    try:
        run = runs_service.get_run(user.core, user.principal, run_id)["run"]
        got = get_transcript(user.core, user.principal, run_id, seat=seat, cursor=cursor, limit="100")
    except DomainError as e:
        return refused(e, error_page, user)
    return user.page("transcript.html", run=run, seat=None if seat is None else int(seat),
                     turns=got["turns"], next_cursor=got["next_cursor"])
